@kep-5963
Feature: Compatibility is one more filter inside the allocator's backtracking search (KEP-5963 Allocation order and backtracking, Composition with DeviceConstraints)

  One GPU on node "node-1": counter set gpu-0 with 100 multiprocessors. The allocator takes requests in
  order and devices in slice order, and backtracks when a later request cannot be satisfied.

  Background:
    Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
    And a node "node-1"
    And the device class "gpu" selecting driver "gpu.example.com"
    And the objects of manifests "classes.yaml, gpu-0-counters.yaml"
    And the objects:
      """yaml
      apiVersion: resource.k8s.io/v1
      kind: ResourceClaim
      metadata: {name: any-then-vgpu, namespace: default}
      spec:
        devices:
          requests:
          - {name: any, exactly: {deviceClassName: gpu}}
          - {name: vgpu, exactly: {deviceClassName: vgpu}}
      """

  Rule: KEP-5963/BACKTRACK-ON-REJECTION  A rejected candidate sends the search back to earlier choices

    Scenario: The first request gives up the MIG partition it took first so that the second gets a vGPU
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
          - name: vgpu-1
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "trainer" using claim "any-then-vgpu"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And the allocation of claim "any-then-vgpu" has results:
        """yaml
        - {request: any, driver: gpu.example.com, pool: node-1, device: vgpu-0, compatibilityGroups: {gpu-0: [vgpu]}}
        - {request: vgpu, driver: gpu.example.com, pool: node-1, device: vgpu-1, compatibilityGroups: {gpu-0: [vgpu]}}
        """

    # A gate-off scheduler skips the grouped partitions: "any device" takes the one without groups, and the
    # vGPU request finds nothing, whatever the search tries.
    Scenario: With kube-scheduler's gate off no combination is found, and nothing is allocated
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "trainer" using claim "any-then-vgpu"
      And a pod "single" with a claim for one "gpu" device
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And claim "any-then-vgpu" is not allocated
      And the claim of pod "single" is allocated device "plain-0"

  Rule: KEP-5963/UNSCHEDULABLE-WITHOUT-COMBINATION  Only when no combination is compatible is the pod unschedulable

    # With kube-scheduler's gate off both partitions are skipped: unschedulable all the same, nothing allocated.
    Scenario Outline: One MIG partition and one vGPU profile cannot serve "any device, then a vGPU" (kube-scheduler <kube-scheduler>)
      Given kube-scheduler is "<kube-scheduler>" (DRADeviceCompatibilityGroups)
      And the objects of manifest "mig-and-vgpu.yaml"
      And a pod "trainer" using claim "any-then-vgpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And a Warning event "FailedScheduling" is recorded for pod "trainer"
      And claim "any-then-vgpu" is not allocated

      Examples:
        | kube-scheduler |
        | new, gate on   |
        | new, gate off  |

  Rule: KEP-5963/MATCH-ATTRIBUTE-CONJUNCTION  Groups and matchAttribute must both hold

    Scenario: Same size and a shared group: the pair found after rejecting both a wrong-group and a wrong-size pair
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-small
            attributes: {type: {string: mig}, size: {int: 1}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "10"}}}
          - name: vgpu-small
            attributes: {type: {string: vgpu}, size: {int: 1}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "10"}}}
          - name: mig-large-0
            attributes: {type: {string: mig}, size: {int: 2}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: mig-large-1
            attributes: {type: {string: mig}, size: {int: 2}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - {name: a, exactly: {deviceClassName: gpu}}
            - {name: b, exactly: {deviceClassName: gpu}}
            constraints:
            - {matchAttribute: gpu.example.com/size}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And claim "pair" is allocated devices "mig-large-0, mig-large-1"

    # A gate-off scheduler skips the grouped partitions; the matchAttribute constraint then pairs the two
    # partitions without groups of the same size, and never one of each size.
    Scenario: With kube-scheduler's gate off the pair is made of the two same-size partitions without groups
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-small
            attributes: {type: {string: mig}, size: {int: 1}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "10"}}}
          - name: plain-small
            attributes: {type: {string: plain}, size: {int: 1}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "10"}}}
          - name: plain-large-0
            attributes: {type: {string: plain}, size: {int: 2}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: plain-large-1
            attributes: {type: {string: plain}, size: {int: 2}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - {name: a, exactly: {deviceClassName: gpu}}
            - {name: b, exactly: {deviceClassName: gpu}}
            constraints:
            - {matchAttribute: gpu.example.com/size}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And claim "pair" is allocated devices "plain-large-0, plain-large-1"

  Rule: KEP-5963/COUNTERS-UNCHANGED  Counter capacity still applies to compatible devices

    Scenario: Two vGPU profiles of 50 fill the GPU and a third compatible one does not fit
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
          - name: vgpu-1
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
          - name: vgpu-2
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "first" with a claim for one "vgpu" device
      When the scheduler runs
      And a pod "second" with a claim for one "vgpu" device is created
      And the scheduler runs
      And a pod "third" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "vgpu-0"
      And the claim of pod "second" is allocated device "vgpu-1"
      And pod "third" is not scheduled with reason "Unschedulable"

    # A gate-off scheduler skips the grouped vGPU profiles; with DRAPartitionableDevices off (as in 1.35 at its
    # defaults) it does not understand the pool at all (KEP-4381/COUNTERS). Either way nothing is allocated.
    Scenario Outline: kube-scheduler <release> with <gates>: none of the vGPU profiles is allocated
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
          - name: vgpu-1
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "first" with a claim for one "vgpu" device
      When the scheduler runs
      Then pod "first" is not scheduled

      Examples:
        | release | gates                            |
        | current | DRADeviceCompatibilityGroups=off |
        | current | DRAPartitionableDevices=off      |
        | 1.35    | defaults                         |
