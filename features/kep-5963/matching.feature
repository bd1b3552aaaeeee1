@kep-5963
Feature: Devices sharing a counter set are allocated together only if their groups allow it (KEP-5963 CompatibilityGroups Assignment, Scheduler Changes)

  Node "node-1" has two GPUs, each a counter set of 100 multiprocessors in pool "node-1". Device
  classes pick partitions by their `type` attribute; the search takes devices in slice order.

  Background:
    Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
    And a node "node-1"
    And the objects of manifests "classes.yaml, two-gpus-counters.yaml"

  Rule: KEP-5963/NIL-GROUP-EQUIVALENCE  Unset, null and [] all mean "no groups"

    # A gate-off scheduler skips only devices that declare a group (D-5963-4): every spelling of "none" is
    # allocated as before, and mig-0 is skipped.
    Scenario Outline: A device whose groups are <spelling> behaves as a device without groups (kube-scheduler <kube-scheduler>)
      Given kube-scheduler is "<kube-scheduler>" (DRADeviceCompatibilityGroups)
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
            - <consumption>
          - name: plain-1
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "first" with a claim for one "plain" device
      When the scheduler runs
      And a pod "second" with a claim for one "plain" device is created
      And a pod "grouped" with a claim for one "mig" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "plain-0"
      And the claim of pod "second" is allocated device "plain-1"
      And pod "grouped" is not scheduled with reason "Unschedulable"
      And the allocation of the claim of pod "first" has results:
        """yaml
        - {request: device, driver: gpu.example.com, pool: node-1, device: plain-0}
        """

      Examples:
        | kube-scheduler | spelling      | consumption                                                                                  |
        | new, gate on   | unset         | {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}                              |
        | new, gate on   | null          | {counterSet: gpu-0, compatibilityGroups: null, counters: {multiprocessors: {value: "20"}}} |
        | new, gate on   | an empty list | {counterSet: gpu-0, compatibilityGroups: [], counters: {multiprocessors: {value: "20"}}}   |
        | new, gate off  | unset         | {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}                              |
        | new, gate off  | null          | {counterSet: gpu-0, compatibilityGroups: null, counters: {multiprocessors: {value: "20"}}} |
        | new, gate off  | an empty list | {counterSet: gpu-0, compatibilityGroups: [], counters: {multiprocessors: {value: "20"}}}   |

  Rule: KEP-5963/NIL-GROUP-MATCHING  A device without groups never shares a counter set with a grouped one

    Background:
      Given the ResourceSlice:
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
          - name: plain-1
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """

    Scenario: With a grouped device allocated, a device without groups on the same counter set is not
      Given a pod "grouped" with a claim for one "mig" device
      When the scheduler runs
      Then pod "grouped" is bound to node "node-1"
      When a pod "plain" with a claim for one "plain" device is created
      And the scheduler runs
      Then pod "grouped" is bound to node "node-1"
      And pod "plain" is not scheduled with reason "Unschedulable"

    Scenario: With a device without groups allocated, a grouped device on the same counter set is not
      Given a pod "plain" with a claim for one "plain" device
      When the scheduler runs
      Then pod "plain" is bound to node "node-1"
      When a pod "grouped" with a claim for one "mig" device is created
      And the scheduler runs
      Then pod "plain" is bound to node "node-1"
      And pod "grouped" is not scheduled with reason "Unschedulable"

    Scenario: Two devices without groups share the counter set
      Given a pod "first" with a claim for one "plain" device
      When the scheduler runs
      And a pod "second" with a claim for one "plain" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "plain-0"
      And the claim of pod "second" is allocated device "plain-1"

    # A gate-off scheduler never allocates the grouped device, whichever comes first, and the two devices
    # without groups still share the counter set.
    Scenario: With kube-scheduler's gate off the grouped device is skipped and both devices without groups are allocated
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "grouped" with a claim for one "mig" device
      When the scheduler runs
      And a pod "first" with a claim for one "plain" device is created
      And the scheduler runs
      And a pod "second" with a claim for one "plain" device is created
      And the scheduler runs
      Then pod "grouped" is not scheduled with reason "Unschedulable"
      And the claim of pod "first" is allocated one of devices "plain-0, plain-1"
      And the claim of pod "second" is allocated one of devices "plain-0, plain-1"

  Rule: KEP-5963/ROLLING-INTERSECTION  A new device must share a group with every allocated device at once

    Background:
      Given the objects:
        """yaml
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: xy}
        spec:
          selectors:
          - cel: {expression: "device.attributes['gpu.example.com'].type == 'xy'"}
        ---
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: yz}
        spec:
          selectors:
          - cel: {expression: "device.attributes['gpu.example.com'].type == 'yz'"}
        ---
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: xz}
        spec:
          selectors:
          - cel: {expression: "device.attributes['gpu.example.com'].type == 'xz'"}
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: xy-0
            attributes: {type: {string: xy}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [x, y], counters: {multiprocessors: {value: "10"}}}
          - name: yz-0
            attributes: {type: {string: yz}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [y, z], counters: {multiprocessors: {value: "10"}}}
          - name: xz-0
            attributes: {type: {string: xz}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [x, z], counters: {multiprocessors: {value: "10"}}}
        """

    @shape:devices-on-set:several
    Scenario: After [x, y] and [y, z] the intersection is [y], so [x, z] is refused though it meets each of them
      Given a pod "first" with a claim for one "xy" device
      When the scheduler runs
      Then pod "first" is bound to node "node-1"
      When a pod "second" with a claim for one "yz" device is created
      And the scheduler runs
      Then pod "second" is bound to node "node-1"
      When a pod "third" with a claim for one "xz" device is created
      And the scheduler runs
      Then pod "first" is bound to node "node-1"
      And pod "second" is bound to node "node-1"
      And pod "third" is not scheduled with reason "Unschedulable"

    @shape:devices-on-set:one
    Scenario: With only [x, y] allocated, [x, z] is admitted through x
      Given a pod "first" with a claim for one "xy" device
      When the scheduler runs
      And a pod "third" with a claim for one "xz" device is created
      And the scheduler runs
      Then the claim of pod "third" is allocated device "xz-0"

    # Every device here declares groups: a gate-off scheduler allocates none of them, so no intersection forms.
    Scenario: With kube-scheduler's gate off neither [x, y] nor [x, z] is allocated
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "first" with a claim for one "xy" device
      When the scheduler runs
      And a pod "third" with a claim for one "xz" device is created
      And the scheduler runs
      Then pod "first" is not scheduled with reason "Unschedulable"
      And pod "third" is not scheduled with reason "Unschedulable"

  Rule: KEP-5963/ANY-CLAIM-ANY-POD  Devices of the same claim, another claim of the pod, or another pod all count

    Background:
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: gpu-0-vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
          - name: gpu-1-mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-1, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: gpu-1-vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-1, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """

    Scenario: The second request of one claim sees the first and takes its vGPU on the other GPU
      Given the ResourceClaim:
        """yaml
        metadata: {name: both}
        spec:
          devices:
            requests:
            - {name: mig, exactly: {deviceClassName: mig}}
            - {name: vgpu, exactly: {deviceClassName: vgpu}}
        """
      And a pod "trainer" using claim "both"
      When the scheduler runs
      Then the allocation of claim "both" has results:
        """yaml
        - {request: mig, driver: gpu.example.com, pool: node-1, device: gpu-0-mig-0, compatibilityGroups: {gpu-0: [mig]}}
        - {request: vgpu, driver: gpu.example.com, pool: node-1, device: gpu-1-vgpu-0, compatibilityGroups: {gpu-1: [vgpu]}}
        """

    Scenario: Two claims of one pod are allocated together and keep apart as well
      Given a claim "mig" for one "mig" device
      And a claim "vgpu" for one "vgpu" device
      And a pod "trainer" using claims "mig, vgpu"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And claim "mig" is allocated device "gpu-0-mig-0"
      And claim "vgpu" is allocated device "gpu-1-vgpu-0"

    Scenario: Another pod's allocation steers a new pod to the other GPU
      Given a pod "first" with a claim for one "vgpu" device
      When the scheduler runs
      And a pod "second" with a claim for one "mig" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "gpu-0-vgpu-0"
      And the claim of pod "second" is allocated device "gpu-1-mig-0"

    Scenario: With kube-scheduler's gate off the claim asking for a MIG partition and a vGPU gets neither
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And a claim "mig" for one "mig" device
      And a claim "vgpu" for one "vgpu" device
      And a pod "trainer" using claims "mig, vgpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And claim "mig" is not allocated
      And claim "vgpu" is not allocated

  Rule: KEP-5963/PER-COUNTER-SET  A device on two counter sets must be admitted on each, with the groups it declares there

    Background:
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: gpu-1-mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-1, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: gpu-1-vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-1, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "20"}}}
          - name: span
            attributes: {type: {string: span}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "10"}}}
            - {counterSet: gpu-1, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "10"}}}
        """
      And the DeviceClass:
        """yaml
        metadata: {name: span}
        spec:
          selectors:
          - cel: {expression: "device.attributes['gpu.example.com'].type == 'span'"}
        """
      And a claim "gpu-0-mig" for one "mig" device
      And a pod "on-gpu-0" using claim "gpu-0-mig"
      When the scheduler runs
      Then claim "gpu-0-mig" is allocated device "gpu-0-mig-0"

    @shape:counter-sets:several
    Scenario: mig on gpu-0 and vgpu on gpu-1 admit a device declaring mig on gpu-0 and vgpu on gpu-1
      Given a pod "on-gpu-1" with a claim for one "vgpu" device
      When the scheduler runs
      And a pod "spanning" with a claim for one "span" device is created
      And the scheduler runs
      Then the claim of pod "on-gpu-1" is allocated device "gpu-1-vgpu-0"
      And the allocation of the claim of pod "spanning" has results:
        """yaml
        - request: device
          driver: gpu.example.com
          pool: node-1
          device: span
          compatibilityGroups: {gpu-0: [mig], gpu-1: [vgpu]}
        """

    Scenario: Admitted on gpu-0 but refused on gpu-1, the device is not allocated
      Given a claim "gpu-1-mig" for one "mig" device
      And a pod "on-gpu-1" using claim "gpu-1-mig"
      When the scheduler runs
      And a pod "spanning" with a claim for one "span" device is created
      And the scheduler runs
      Then claim "gpu-1-mig" is allocated device "gpu-1-mig-0"
      And pod "spanning" is not scheduled with reason "Unschedulable"

    # Admitted on both counter sets with the gate on (the scenario before last), the spanning device declares
    # groups, so a scheduler whose gate is turned off skips it; the MIG partition allocated before stays.
    Scenario: After kube-scheduler's gate is turned off the spanning device is not allocated, and gpu-0's MIG partition stays
      When kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "on-gpu-1" with a claim for one "vgpu" device is created
      And a pod "spanning" with a claim for one "span" device is created
      And the scheduler runs
      Then pod "spanning" is not scheduled with reason "Unschedulable"
      And pod "on-gpu-1" is not scheduled with reason "Unschedulable"
      And claim "gpu-0-mig" is allocated device "gpu-0-mig-0"

  Rule: KEP-5963/UNRELATED-COUNTER-SETS  Devices on different counter sets are never compared

    Scenario: A MIG partition of gpu-0 and a vGPU profile of gpu-1 in one slice are both allocated
      Given the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: gpu-1-vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-1, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "first" with a claim for one "mig" device
      When the scheduler runs
      And a pod "second" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then pod "first" is bound to node "node-1"
      And pod "second" is bound to node "node-1"

    # A gate-off scheduler skips the grouped partition of gpu-0 and allocates the group-less one of gpu-1: the
    # counter sets are still judged apart.
    Scenario: With kube-scheduler's gate off the MIG partition of gpu-0 is skipped and gpu-1's partition without groups is allocated
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-0
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: gpu-1-plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-1, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "first" with a claim for one "mig" device
      And a pod "second" with a claim for one "plain" device
      When the scheduler runs
      Then pod "first" is not scheduled with reason "Unschedulable"
      And the claim of pod "second" is allocated device "gpu-1-plain-0"

  Rule: KEP-5963/GROUPS-WITHIN-POOL  Groups are compared only inside one driver's pool

    # A counter set belongs to one driver's pool: the same name elsewhere is another counter set. The wrong
    # implementation keys its state by the counter set's name alone and refuses the second pod.
    # A gate-off scheduler allocates neither grouped device, in whichever pool.
    Scenario Outline: A vGPU on counter set "gpu-0" of <elsewhere> beside a MIG partition on pool node-1's "gpu-0" (kube-scheduler <kube-scheduler>)
      Given kube-scheduler is "<kube-scheduler>" (DRADeviceCompatibilityGroups)
      And the ResourceSlice:
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
        """
      And a pod "first" with a claim for one "mig" device
      When the scheduler runs
      And the ResourceSlice is created:
        """yaml
        metadata: {name: other-counters}
        spec:
          driver: <driver>
          pool: {name: <pool>, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0
            counters:
              multiprocessors: {value: "100"}
        """
      And the ResourceSlice is created:
        """yaml
        metadata: {name: other-devices}
        spec:
          driver: <driver>
          pool: {name: <pool>, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And the DeviceClass is created:
        """yaml
        metadata: {name: other-vgpu}
        spec:
          selectors:
          - cel: {expression: "device.driver == '<driver>' && device.attributes['<driver>'].type == 'vgpu'"}
        """
      And a pod "second" with a claim for one "other-vgpu" device is created
      And the scheduler runs
      Then pod "first" <outcome>
      And pod "second" <outcome>

      Examples:
        | kube-scheduler | elsewhere                                | driver             | pool   | outcome                                  |
        | new, gate on   | another pool of driver gpu.example.com   | gpu.example.com    | spare  | is bound to node "node-1"                |
        | new, gate on   | pool node-1 of driver device.example.com | device.example.com | node-1 | is bound to node "node-1"                |
        | new, gate off  | another pool of driver gpu.example.com   | gpu.example.com    | spare  | is not scheduled with reason "Unschedulable" |

  Rule: KEP-5963/STATE-UNTIL-RELEASE  A counter set constrains new devices until its last allocation is released

    Scenario: A vGPU waits until both MIG partitions of the GPU are released
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
          - name: mig-1
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "mig-a" with a claim for one "mig" device
      And a pod "mig-b" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-a" is bound to node "node-1"
      And pod "mig-b" is bound to node "node-1"
      When a pod "vgpu" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then pod "vgpu" is not scheduled
      When pod "mig-a" is deleted
      And kube-scheduler restarts
      And the scheduler runs
      Then pod "vgpu" is not scheduled
      When pod "mig-b" is deleted
      And the scheduler runs
      Then pod "vgpu" is bound to node "node-1"
      And the claim of pod "vgpu" is allocated device "vgpu-0"

    # Both MIG partitions allocated with the gate on carry snapshots; a scheduler whose gate is then turned off
    # adds nothing to gpu-0, not even a partition without groups, until the last of them is released.
    Scenario: After kube-scheduler's gate is turned off, a partition without groups waits until both MIG partitions are released
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
          - name: mig-1
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-a" with a claim for one "mig" device
      And a pod "mig-b" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-a" is bound to node "node-1"
      And pod "mig-b" is bound to node "node-1"
      When kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "plain" with a claim for one "plain" device is created
      And the scheduler runs
      Then pod "plain" is not scheduled
      When pod "mig-a" is deleted
      And the scheduler runs
      Then pod "plain" is not scheduled
      When pod "mig-b" is deleted
      And the scheduler runs
      Then the claim of pod "plain" is allocated device "plain-0"

    Scenario: A MIG partition the driver no longer publishes keeps the GPU MIG-only while it stays allocated
      Given the objects of manifest "mig-and-vgpu.yaml"
      And a pod "mig-a" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-a" is bound to node "node-1"
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: vgpu-0
            attributes: {type: {string: vgpu}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [vgpu], counters: {multiprocessors: {value: "50"}}}
        """
      And a pod "vgpu" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then pod "vgpu" is not scheduled
      And the claim of pod "mig-a" is allocated device "mig-0"
      When pod "mig-a" is deleted
      And the scheduler runs
      Then pod "vgpu" is bound to node "node-1"
