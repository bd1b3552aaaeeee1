@kep-4381 @kep-5007 @structured-allocation
Feature: Structured allocation rules with their gate off in the scheduler (issue 39)

  # With DRADeviceBindingConditions or DRAResourceClaimDeviceStatus off the allocator treats a device with
  # binding conditions as not selectable, copies no conditions and does not pin an allocation to the node for
  # bindsToNode (v1.36.2's staging/src/k8s.io/dynamic-resource-allocation/structured allocators, isSelectable).
  # DRADeviceBindingConditions needs DRAResourceClaimDeviceStatus, and DRADeviceTaintRules needs DRADeviceTaints
  # (upstream's gate dependencies): a row turning off the first of a pair turns off the second too.

  Background:
    Given a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"

  Rule: KEP-4381/BINDING-CONDITIONS-GATED  With either gate off, devices with binding conditions are never chosen

    # A row at the release before DRADeviceBindingConditions turned on by default (1.36); the gate-off rows are in
    # binding-conditions.feature. (Before 1.33, where DRAResourceClaimDeviceStatus was off by default, a scheduler
    # has no binding fields at all and sees a plain device: KEP-5007's skew rules, not this one.)
    Scenario Outline: A <release> scheduler at its defaults passes over the only device, which has binding conditions
      Given kube-scheduler version "<release>" with feature gates "defaults"
      And the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

      Examples:
        | release |
        | 1.35    |

  Rule: KEP-4381/BINDING-CONDITIONS-LAST  Devices with binding conditions are tried after plain ones, per device or per pool

    # With the gates on the device with conditions is taken last, once the plain one is used (the rule's scenario);
    # off, it is never taken, so a claim for both devices cannot be allocated.
    Scenario Outline: With <gates> in a <release> scheduler, the device with conditions is not taken even when the plain one is used up
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: a-fabric}
        spec:
          driver: gpu.example.com
          pool: {name: a-fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-attachable
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: b-local}
        spec:
          driver: gpu.example.com
          pool: {name: b-local, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-plain
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: both}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: fabric-gpu, count: 2}
        """
      And a pod "trainer" using claim "both"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "both" is not allocated

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |

  Rule: KEP-4381/BINDING-CONDITIONS-COPIED  Results copy the device's binding conditions

    # The device with conditions comes first; off, the allocator passes over it for the one with bindsToNode
    # alone, whose result copies nothing and is not pinned to the node.
    Scenario Outline: With <gates> in a <release> scheduler, the result copies no conditions and bindsToNode pins nothing
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/attached, dra.example.com/healthy]
            bindingFailureConditions: [dra.example.com/attach-failed]
          - name: gpu-1
            bindsToNode: true
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-1"
      And the allocation of claim "training" carries no binding conditions
      And claim "training" is usable on every node
      And pod "trainer" is bound to node "worker-1"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |

  Rule: KEP-4381/DEVICE-TAINT-RULES  A DeviceTaintRule's taint keeps untolerating requests off the devices it selects

    # DRADeviceTaintRules cannot be on with DRADeviceTaints off, so with DRADeviceTaints off no rule is honoured:
    # the claim for both GPUs is allocated though a rule taints one of them.
    Scenario Outline: With <gates> in a <release> scheduler a rule's taint is ignored with every other taint
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the device class "gpu" selecting driver "gpu.example.com"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
          - name: gpu-1
            taints:
            - {key: example.com/ecc-errors, effect: NoSchedule}
        """
      And the DeviceTaintRule:
        """yaml
        metadata: {name: gpu-0-maintenance}
        spec:
          deviceSelector: {driver: gpu.example.com, pool: worker-1, device: gpu-0}
          taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
        """
      And the objects of manifest "two-gpus.yaml"
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated devices "gpu-0, gpu-1"

      Examples:
        | release | gates                                        |
        | current | DRADeviceTaints=off, DRADeviceTaintRules=off |
        | 1.35    | defaults                                     |

  Rule: KEP-4381/DISTINCT-ATTRIBUTE  Devices under distinctAttribute all differ in the attribute

    # A 1.35 scheduler at its defaults has DRAConsumableCapacity and DRADeviceBindingConditions off: as with both
    # set off (the rule's row in search.feature), only the stable allocator is left, which does not know the
    # constraint and allocates nothing rather than ignore it.
    Scenario: A 1.35 scheduler at its defaults does not allocate a claim with distinctAttribute
      Given kube-scheduler version "1.35" with feature gates "defaults"
      And the device class "gpu" selecting driver "gpu.example.com"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            attributes:
              gpu.example.com/pcieRoot: {string: pci-a}
          - name: gpu-1
            attributes:
              gpu.example.com/pcieRoot: {string: pci-b}
        """
      And the objects of manifest "spread-two-gpus.yaml"
      And a pod "trainer" using claim "spread"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "spread" is not allocated
