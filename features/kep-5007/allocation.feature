@kep-5007
Feature: Allocation records what binding needs and prefers devices that need nothing (KEP-5007 allocation)

  Both binding gates are on by default at the current release; a row that needs one off, or an older release's
  defaults, says so.

  Background:
    Given nodes "worker-1, worker-2"
    And the device class "gpu" selecting driver "gpu.example.com"

  Rule: KEP-5007/DEVICE-FIELDS  A device may declare binding fields and the API server keeps them

    Scenario: The binding fields of a device are stored as written
      When the ResourceSlice is created:
        """yaml
        metadata: {name: fabric}
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
      Then device "gpu-0" of ResourceSlice "fabric" has binding fields

  Rule: KEP-5007/RESULT-COPIES-CONDITIONS  The allocation keeps a copy of the device's conditions

    Scenario: The claim keeps the conditions the device had when it was allocated
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/attached, dra.example.com/firmware-loaded]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then the allocation of claim "training" copies binding conditions "dra.example.com/attached, dra.example.com/firmware-loaded" and failure conditions "dra.example.com/attach-failed"
      When the ResourceSlice "fabric" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 2, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/ready]
            bindingFailureConditions: [dra.example.com/broken]
        """
      And the scheduler runs
      Then the allocation of claim "training" copies binding conditions "dra.example.com/attached, dra.example.com/firmware-loaded" and failure conditions "dra.example.com/attach-failed"

  Rule: KEP-5007/ALLOCATION-TIMESTAMP  The allocation is stamped once, when it is written

    Scenario: The timestamp is the allocation's time and a pod that joins later does not move it
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "shared" for one "gpu" device
      When 5 minutes pass
      And a pod "first" using claim "shared" is created
      And the scheduler runs
      Then claim "shared" was allocated 0 seconds ago
      When 3 minutes pass
      And a pod "second" using claim "shared" is created
      And the scheduler runs
      Then pod "second" waits in PreBind
      And claim "shared" was allocated 3 minutes ago

    # Upstream stamps every allocation it writes with both gates on, and none with either off (its API server
    # keeps a timestamp it is sent, so the scheduler's gates alone decide). The first row asks only for a stamp:
    # how soon a live scheduler gets to the pod is its own affair (ALLOCATION-TIMESTAMP's own scenario dates it).
    Scenario Outline: A plain device allocated by kube-scheduler <version> with <scheduler>: <stamp>
      Given kube-scheduler version "<version>" with feature gates "<scheduler>"
      And node "worker-1" has 1 devices "local" of driver "gpu.example.com"
      And a claim "plain" for one "gpu" device
      And a pod "user" using claim "plain"
      When the scheduler runs
      Then pod "user" is bound to node "worker-1"
      And <stamp>

      # 1.35: the release before DRADeviceBindingConditions turned on by default.
      Examples:
        | version | scheduler                        | stamp                                      |
        | current | defaults                         | claim "plain" was allocated less than 2 minutes ago |
        | current | DRADeviceBindingConditions=off   | claim "plain" has no allocationTimestamp   |
        | 1.34    | DRADeviceBindingConditions=on, DRAResourceClaimDeviceStatus=off | claim "plain" has no allocationTimestamp   |
        | 1.35    | defaults                         | claim "plain" has no allocationTimestamp   |

  Rule: KEP-5007/PREFER-NO-CONDITIONS  Devices that need no preparation are chosen first

    Scenario: On one node a node-local device is chosen before a fabric device
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          nodeSelector:
            nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]}]
          devices:
          - {name: fabric-0, bindsToNode: true, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-local}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: local-0
        """
      And a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      Then the claim of pod "trainer" is allocated device "local-0"
      And pod "trainer" is bound to node "worker-1"

    # slow-0 leads the first pool by name: an allocator ignoring binding conditions takes it. With either gate off
    # in kube-scheduler slow-0 is no candidate at all (upstream's allocator passes over devices with binding
    # conditions then), so the same two plain devices are the outcomes.
    Scenario Outline: A plain device is chosen before a device with conditions, whichever pool it is in (kube-scheduler <version>, <scheduler>)
      Given kube-scheduler version "<version>" with feature gates "<scheduler>"
      And the ResourceSlice:
        """yaml
        metadata: {name: mixed}
        spec:
          driver: gpu.example.com
          pool: {name: a-mixed, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - {name: slow-0, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
          - {name: ready-a}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: plain}
        spec:
          driver: gpu.example.com
          pool: {name: b-plain, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - {name: ready-b}
        """
      And a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      Then the claim of pod "trainer" is allocated one of devices "ready-a, ready-b"
      And pod "trainer" is bound to one of nodes "worker-1, worker-2"

      # 1.35 is the release before DRADeviceBindingConditions turned on by default.
      Examples:
        | version | scheduler                        |
        | current | defaults                         |
        | current | DRADeviceBindingConditions=off   |
        | 1.34    | DRADeviceBindingConditions=on, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                         |

  Rule: KEP-5007/BINDS-TO-NODE  bindsToNode pins the allocation to the chosen node before the wait

    Scenario: A fabric device with bindsToNode is pinned to the node chosen for the pod
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      And claim "training" is usable only on one of nodes "worker-1, worker-2"

    Scenario: Without bindsToNode a device usable on all nodes leaves the allocation unpinned
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - {name: gpu-0, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      And claim "training" is usable on every node
