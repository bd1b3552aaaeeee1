@kep-5963
Feature: Feature gates, version skew, downgrade and upgrade (KEP-5963 Version Skew Strategy, Upgrade / Downgrade Strategy, Feature Enablement and Rollback)

  A component is "old" (1.36, before the field existed), "new, gate off" or "new, gate on" (1.37 with
  DRADeviceCompatibilityGroups off or on), the three columns and rows of the KEP's skew table. GPU
  gpu-0 on node "node-1" has 100 multiprocessors; mig-0 declares group "mig", vgpu-0 group "vgpu".

  Background:
    Given a node "node-1"
    And the objects of manifest "classes.yaml"

  Rule: KEP-5963/VERSION-SKEW-MATRIX  Every cell of the KEP's kube-apiserver by kube-scheduler table

    Scenario Outline: kube-apiserver <kube-apiserver>, kube-scheduler <kube-scheduler>: <behaviour>
      Given kube-apiserver is "<kube-apiserver>" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "<kube-scheduler>" (DRADeviceCompatibilityGroups)
      And the objects of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      And a pod "vgpu-user" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then ResourceSlice "node-1-devices" <stored slice>
      And pod "mig-user" <mig-user>
      And pod "vgpu-user" <vgpu-user>
      And the claim of pod "mig-user" <mig-user claim>

      Examples:
        | kube-apiserver | kube-scheduler | behaviour       | stored slice                        | mig-user                   | vgpu-user                  | mig-user claim                   |
        | old            | old            | Pre-KEP         | declares no compatibility groups    | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | old            | new, gate off  | Pre-KEP         | declares no compatibility groups    | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | old            | new, gate on   | Pre-KEP         | declares no compatibility groups    | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | new, gate off  | old            | Pre-KEP         | declares no compatibility groups    | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | new, gate off  | new, gate off  | Pre-KEP         | declares no compatibility groups    | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | new, gate off  | new, gate on   | Pre-KEP         | declares no compatibility groups    | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | new, gate on   | old            | Driver-only     | declares compatibility groups       | is bound to node "node-1"  | is bound to node "node-1"  | records no compatibility groups  |
        | new, gate on   | new, gate off  | Devices skipped | declares compatibility groups       | is not scheduled           | is not scheduled           | is not allocated                 |
        | new, gate on   | new, gate on   | Full feature    | declares compatibility groups       | is bound to node "node-1"  | is not scheduled           | records compatibility groups     |

  Rule: KEP-5963/GATE-OFF-SKIPS-GROUPED-DEVICES  A gate-off scheduler skips devices that declare groups

    Background:
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And the objects of manifest "gpu-0-counters.yaml"
      And the objects:
        """yaml
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
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
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-user" with a claim for one "mig" device
      And a pod "plain-user" with a claim for one "plain" device
      When the scheduler runs
      Then pod "mig-user" is not scheduled with reason "Unschedulable"
      And pod "plain-user" is bound to node "node-1"

    Scenario: The skipped device is allocated once the driver removes its groups
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
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And the claim of pod "mig-user" records no compatibility groups

    Scenario: The skipped device is considered once the scheduler's gate is enabled, and then judged by its groups
      When kube-scheduler restarts as "new, gate on" (DRADeviceCompatibilityGroups)
      And the scheduler runs
      Then pod "mig-user" is not scheduled with reason "Unschedulable"
      When pod "plain-user" is deleted
      And the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And the claim of pod "mig-user" records compatibility groups

  Rule: KEP-5963/GATE-OFF-RESPECTS-SNAPSHOTS  A gate-off scheduler adds nothing to a counter set with snapshotted groups

    Scenario: After turning the gate off, gpu-0 holding a MIG partition takes nothing new until it is released
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
      And the objects of manifest "two-gpus-counters.yaml"
      And the objects of manifest "mig-and-plain-on-two-gpus.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then the claim of pod "mig-user" records compatibility groups
      When kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "first" with a claim for one "plain" device is created
      And the scheduler runs
      And a pod "second" with a claim for one "plain" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "gpu-1-plain-0"
      And pod "second" is not scheduled with reason "Unschedulable"
      When pod "mig-user" is deleted
      And the scheduler runs
      Then the claim of pod "second" is allocated device "gpu-0-plain-0"

    # The snapshot in the claim's status is what closes gpu-0, not the slice: the driver no longer publishing
    # the MIG partition changes nothing while it stays allocated.
    Scenario: gpu-0 stays closed to a gate-off scheduler after the allocated MIG partition is no longer published
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
      And the objects of manifests "two-gpus-counters.yaml, mig-and-plain-on-two-gpus.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      And kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
          - name: gpu-1-plain-0
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-1, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "first" with a claim for one "plain" device is created
      And the scheduler runs
      And a pod "second" with a claim for one "plain" device is created
      And the scheduler runs
      Then the claim of pod "first" is allocated device "gpu-1-plain-0"
      And pod "second" is not scheduled with reason "Unschedulable"
      When pod "mig-user" is deleted
      And the scheduler runs
      Then the claim of pod "second" is allocated device "gpu-0-plain-0"

  Rule: KEP-5963/APISERVER-GATE-OFF-STRIPS  A gate-off API server drops the fields on create and keeps stored ones on update

    Background:
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate on" (DRADeviceCompatibilityGroups)
      And the objects of manifest "gpu-0-counters.yaml"
      And the objects:
        """yaml
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
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
      When kube-apiserver restarts as "new, gate off" (DRADeviceCompatibilityGroups)

    Scenario: A slice created while the gate is off loses its groups
      When the ResourceSlice is created:
        """yaml
        metadata: {name: node-1-more}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-1
            attributes: {type: {string: mig}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      Then ResourceSlice "node-1-more" declares no compatibility groups
      And ResourceSlice "node-1-devices" declares compatibility groups

    Scenario: A slice stored with groups keeps them when the driver updates it while the gate is off
      When the ResourceSlice "node-1-devices" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: mig-0
            attributes: {type: {string: mig}, profile: {string: 1g.10gb}}
            consumesCounters:
            - {counterSet: gpu-0, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      Then ResourceSlice "node-1-devices" declares compatibility groups

    Scenario: The snapshot the scheduler writes into a claim's status is dropped while the gate is off
      Given a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And the claim of pod "mig-user" records no compatibility groups

  Rule: KEP-5963/MIXED-ADMITS-NOTHING  A counter set holding grouped and group-less allocations takes nothing new

    Scenario: An old scheduler adds a device without groups beside a MIG partition; after the upgrade gpu-0 is closed
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate on" (DRADeviceCompatibilityGroups)
      And the objects of manifest "gpu-0-counters.yaml"
      And the objects:
        """yaml
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
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
          - name: plain-1
            attributes: {type: {string: plain}}
            consumesCounters:
            - {counterSet: gpu-0, counters: {multiprocessors: {value: "20"}}}
        """
      And a pod "mig-a" with a claim for one "mig" device
      When the scheduler runs
      And kube-scheduler restarts as "old" (DRADeviceCompatibilityGroups)
      And a pod "plain-a" with a claim for one "plain" device is created
      And the scheduler runs
      Then the claim of pod "mig-a" is allocated device "mig-0"
      And the claim of pod "plain-a" is allocated device "plain-0"
      When kube-scheduler restarts as "new, gate on" (DRADeviceCompatibilityGroups)
      And a pod "mig-b" with a claim for one "mig" device is created
      And a pod "plain-b" with a claim for one "plain" device is created
      And the scheduler runs
      Then pod "mig-b" is not scheduled with reason "Unschedulable"
      And pod "plain-b" is not scheduled with reason "Unschedulable"

  Rule: KEP-5963/DOWNGRADED-APISERVER  An API server older than the feature serves no stored groups; one with the gate off does

    # The scheduler keeps its gate on throughout: only what the API server serves differs. An old API server
    # makes the cluster Pre-KEP even for what was stored under the feature (the vGPU joins the MIG partition);
    # a gate-off one still serves the stored groups and the MIG claim's snapshot, which keep the vGPU out.
    Scenario Outline: A MIG pod runs, then kube-apiserver restarts as <kube-apiserver>: a vGPU pod <vgpu-user>
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate on" (DRADeviceCompatibilityGroups)
      And the objects of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      And kube-apiserver restarts as "<kube-apiserver>" (DRADeviceCompatibilityGroups)
      And a pod "vgpu-user" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then ResourceSlice "node-1-devices" <stored slice>
      And the claim of pod "mig-user" <mig-user claim>
      And pod "mig-user" is bound to node "node-1"
      And pod "vgpu-user" <vgpu-user>

      Examples:
        | kube-apiserver | stored slice                     | mig-user claim                  | vgpu-user                 |
        | old            | declares no compatibility groups | records no compatibility groups | is bound to node "node-1" |
        | new, gate off  | declares compatibility groups    | records compatibility groups    | is not scheduled          |

  Rule: KEP-5963/DOWNGRADE-KEEPS-ALLOCATIONS  Allocations made under the feature survive a downgrade

    Scenario: Downgraded to a scheduler without the feature, the MIG pod keeps its allocation and groups are ignored
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate on" (DRADeviceCompatibilityGroups)
      And the objects of manifests "gpu-0-counters.yaml, mig-and-vgpu.yaml"
      And a pod "mig-user" with a claim for one "mig" device
      When the scheduler runs
      And kube-scheduler restarts as "old" (DRADeviceCompatibilityGroups)
      And the scheduler runs
      Then pod "mig-user" is bound to node "node-1"
      And the claim of pod "mig-user" is allocated device "mig-0"
      And the claim of pod "mig-user" records compatibility groups
      When a pod "vgpu-user" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then pod "vgpu-user" is bound to node "node-1"
      And the claim of pod "vgpu-user" records no compatibility groups

  Rule: KEP-5963/UPGRADE-DOWNGRADE-UPGRADE  Enabling the gate again makes groups and snapshots effective again

    Scenario: Gate on, off, on: MIG partitions are allocated before and after, skipped in between, and vGPU stays out
      Given kube-apiserver is "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler is "new, gate on" (DRADeviceCompatibilityGroups)
      And the objects of manifest "gpu-0-counters.yaml"
      And the objects:
        """yaml
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
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
      When the scheduler runs
      Then the claim of pod "mig-a" records compatibility groups
      When kube-apiserver restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And kube-scheduler restarts as "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "mig-b" with a claim for one "mig" device is created
      And the scheduler runs
      Then pod "mig-a" is bound to node "node-1"
      And pod "mig-b" is not scheduled with reason "Unschedulable"
      When kube-apiserver restarts as "new, gate on" (DRADeviceCompatibilityGroups)
      And kube-scheduler restarts as "new, gate on" (DRADeviceCompatibilityGroups)
      And a pod "vgpu-user" with a claim for one "vgpu" device is created
      And the scheduler runs
      Then the claim of pod "mig-b" is allocated device "mig-1"
      And the claim of pod "mig-b" records compatibility groups
      And pod "vgpu-user" is not scheduled with reason "Unschedulable"
