@kep-4381 @kep-5007 @structured-allocation
Feature: Devices with binding conditions in allocation (structured allocation, KEP-5007)

  Background:
    Given a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"

  Rule: KEP-4381/BINDING-CONDITIONS-GATED  With either gate off, devices with binding conditions are never chosen

    # From 1.35 a component refuses to start with DRADeviceBindingConditions on and DRAResourceClaimDeviceStatus
    # off (a gate dependency); a 1.34 scheduler, with the binding gate still alpha, could run so.
    Scenario Outline: A <release> scheduler with <gates> passes over the only device, which has binding conditions
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
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

      Examples:
        | release | gates                                                              |
        | current | DRADeviceBindingConditions=off                                     |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off   |
        | 1.34    | DRADeviceBindingConditions=on, DRAResourceClaimDeviceStatus=off    |

    @upstream-differs:binds-to-node-pins-with-gate-off
    Scenario: With a gate off bindsToNode alone does not pin the allocation
      Given kube-scheduler with feature gates "DRADeviceBindingConditions=off"
      And the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-0"
      And claim "training" is usable on every node

  Rule: KEP-4381/BINDING-CONDITIONS-LAST  Devices with binding conditions are tried after plain ones, per device or per pool

    # The device with conditions comes first in the first pool by name, so an allocator that ignores binding
    # conditions takes it; a plain device of either pool is what a per-device or a per-pool order gives. The
    # rows: upstream runs a newer allocator for the binding gates whether DRAConsumableCapacity is on or off.
    Scenario Outline: A plain device of either pool is chosen before the device with conditions listed first (DRAConsumableCapacity <capacity>)
      Given kube-scheduler with feature gates "DRAConsumableCapacity=<capacity>"
      And the ResourceSlice:
        """yaml
        metadata: {name: a-mixed}
        spec:
          driver: gpu.example.com
          pool: {name: a-mixed, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-attachable
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
          - name: gpu-plain-a
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: b-plain}
        spec:
          driver: gpu.example.com
          pool: {name: b-plain, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-plain-b
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated one of devices "gpu-plain-a, gpu-plain-b"
      And pod "trainer" is bound to a node

      Examples:
        | capacity |
        | on       |
        | off      |

    Scenario: A device with conditions is taken once the other pools are used up
      Given the ResourceSlice:
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
      Then the allocation of claim "both" has results:
        """yaml
        - {request: gpus, driver: gpu.example.com, pool: b-local, device: gpu-plain}
        - request: gpus
          driver: gpu.example.com
          pool: a-fabric
          device: gpu-attachable
          bindingConditions: [dra.example.com/attached]
          bindingFailureConditions: [dra.example.com/attach-failed]
        """

  Rule: KEP-4381/BINDING-CONDITIONS-COPIED  Results copy the device's binding conditions

    Scenario: The result of an attachable device carries both condition lists, and bindsToNode pins it
      Given the ResourceSlice:
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
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then the allocation of claim "training" copies binding conditions "dra.example.com/attached, dra.example.com/healthy" and failure conditions "dra.example.com/attach-failed"
      And claim "training" is usable only on node "worker-1"
