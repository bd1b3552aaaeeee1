@kep-5963
Feature: Allocated devices are judged by their snapshot, candidates by the current slice (KEP-5963 API snapshot, Troubleshooting)

  The scheduler records each allocated device's groups in its allocation result. A driver that later
  rewrites its ResourceSlice changes what new candidates declare, not what allocated devices count as.

  Background:
    Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
    And a node "node-1"
    And the objects of manifests "classes.yaml, gpu-0-counters.yaml, mig-and-vgpu.yaml"

  Rule: KEP-5963/SNAPSHOT-WRITTEN  The allocation result records the device's groups per counter set

    Scenario: A device with groups on one of its two counter sets gets an entry for both
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-more-counters}
        spec:
          driver: gpu.example.com
          pool: {name: link, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-1
            counters:
              multiprocessors: {value: "100"}
          - name: nvlink
            counters:
              lanes: {value: "4"}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-linked}
        spec:
          driver: gpu.example.com
          pool: {name: link, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: linked-mig-0
            attributes: {type: {string: linked}}
            consumesCounters:
            - {counterSet: gpu-1, compatibilityGroups: [mig, mig-linked], counters: {multiprocessors: {value: "20"}}}
            - {counterSet: nvlink, counters: {lanes: {value: "1"}}}
        """
      And the DeviceClass:
        """yaml
        metadata: {name: linked}
        spec:
          selectors:
          - cel: {expression: "device.attributes['gpu.example.com'].type == 'linked'"}
        """
      And a pod "trainer" with a claim for one "linked" device
      When the scheduler runs
      Then the allocation of the claim of pod "trainer" has results:
        """yaml
        - request: device
          driver: gpu.example.com
          pool: link
          device: linked-mig-0
          compatibilityGroups: {gpu-1: [mig, mig-linked], nvlink: []}
        """

    # A gate-off scheduler writes no snapshot: it allocates no device that declares groups, and a device
    # without groups gets a result without compatibilityGroups.
    Scenario: With kube-scheduler's gate off the MIG partition gets no allocation and the partition without groups no snapshot
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-plain}
        spec:
          driver: gpu.example.com
          pool: {name: plain-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-9
            counters:
              multiprocessors: {value: "100"}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-plain-devices}
        spec:
          driver: gpu.example.com
          pool: {name: plain-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-9, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-user" with a claim for one "mig" device
      And a pod "plain-user" with a claim for one "plain" device
      When the scheduler runs
      Then pod "mig-user" is not scheduled with reason "Unschedulable"
      And the allocation of the claim of pod "plain-user" has results:
        """yaml
        - {request: device, driver: gpu.example.com, pool: plain-pool, device: plain-0}
        """

  Rule: KEP-5963/SNAPSHOT-ONLY-WITH-GROUPS  A device without groups leaves no snapshot

    # Its groups written as an empty list, the partition declares none: a gate-off scheduler allocates it too.
    Scenario Outline: A partition without groups is allocated and its result has no compatibilityGroups (kube-scheduler <kube-scheduler>)
      Given kube-scheduler is "<kube-scheduler>" (DRADeviceCompatibilityGroups)
      And the ResourceSlice:
        """yaml
        metadata: {name: plain-devices}
        spec:
          driver: gpu.example.com
          pool: {name: plain-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-9, compatibilityGroups: [], counters: {multiprocessors: {value: "20"}}}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: plain-counters}
        spec:
          driver: gpu.example.com
          pool: {name: plain-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-9
            counters:
              multiprocessors: {value: "100"}
        """
      And a pod "trainer" with a claim for one "plain" device
      When the scheduler runs
      Then the allocation of the claim of pod "trainer" has results:
        """yaml
        - {request: device, driver: gpu.example.com, pool: plain-pool, device: plain-0}
        """

      Examples:
        | kube-scheduler |
        | new, gate on   |
        | new, gate off  |

  Rule: KEP-5963/SNAPSHOTS-NOT-SLICES  A driver rewriting groups after allocation does not change what is allocated

    Scenario: mig-0 is republished in group "vgpu", yet its snapshot keeps vGPU profiles off the GPU
      Given a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "20"}}}
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "vgpu-user" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And pod "vgpu-user" is not scheduled with reason "Unschedulable"
      And the allocation of the claim of pod "mig-user" has results:
        """yaml
        - {request: device, driver: gpu.example.com, pool: node-1, device: mig-0, compatibilityGroups: {gpu-0: [mig]}}
        """

    # A gate-off scheduler, too, reads the snapshot: the driver republishing mig-0 without groups does not
    # open gpu-0 to a partition without groups while mig-0 stays allocated.
    Scenario: mig-0 is republished without groups after kube-scheduler's gate is turned off, yet its snapshot keeps gpu-0 closed
      Given a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      When kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "plain-user" with a claim for one "plain" device is created
      And the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And pod "plain-user" is not scheduled with reason "Unschedulable"

  Rule: KEP-5963/CANDIDATES-FROM-CURRENT-SLICE  A candidate is judged by what its slice declares now

    Scenario: vgpu-0 is republished in groups "mig" and "vgpu" and joins the MIG partition
      Given a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
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
            - {counterSet: gpu-0, compatibilityGroups: [mig, vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "vgpu-user" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then pod "vgpu-user" is bound to node "node-1"
      And the allocation of the claim of pod "vgpu-user" has results:
        """yaml
        - {request: device, driver: gpu.example.com, pool: node-1, device: vgpu-0, compatibilityGroups: {gpu-0: [mig, vgpu]}}
        """

    # A gate-off scheduler judges a candidate by the slice too: a partition published without groups and
    # republished with a group before any pod asks for it is skipped.
    Scenario: With kube-scheduler's gate off a partition republished with a group is skipped
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: plain-1
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: plain-1
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "first" with a claim for one "plain" device is created
      And the scheduler runs
      And a pod "second" with a claim for one "plain" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "plain-1"
      And pod "second" is not scheduled with reason "Unschedulable"

  Rule: KEP-5963/UNSNAPSHOTTED-ALLOCATIONS  A result without snapshot counts as group-less where its device is published

    Background:
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "plain-user" with a claim for one "plain" device is created
      And the scheduler runs

    Scenario: plain-0 is republished in group "mig"; without a snapshot it still counts as group-less
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-user" with a claim for one "mig" device is created
      And the scheduler runs
      Then the claim of pod "plain-user" is allocated device "plain-0"
      And pod "mig-user" is not scheduled with reason "Unschedulable"

    Scenario: plain-0 is no longer published; without a snapshot it constrains nothing
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-user" with a claim for one "mig" device is created
      And the scheduler runs
      Then the claim of pod "plain-user" is allocated device "plain-0"
      And pod "mig-user" is bound to node "node-1"

    # A gate-off scheduler closes only counter sets whose allocations carry a snapshot: plain-0's result has
    # none, so its being republished in group "mig" leaves gpu-0 open to another partition without groups.
    Scenario: After kube-scheduler's gate is turned off, plain-0 republished in group "mig" still leaves gpu-0 open
      When kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: plain-1
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "other" with a claim for one "plain" device is created
      And the scheduler runs
      Then the claim of pod "plain-user" is allocated device "plain-0"
      And the claim of pod "other" is allocated device "plain-1"
