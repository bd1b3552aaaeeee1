@kep-5007
Feature: Binding conditions judged by their status alone, bindsToNode on its own, and why a binding was given up (KEP-5007)

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"

  Rule: KEP-5007/BINDS-TO-NODE  bindsToNode pins the allocation to the chosen node, with or without binding conditions

    Scenario: A device with bindsToNode and no binding conditions is pinned to the pod's node, which binds at once
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - {name: gpu-0, bindsToNode: true}
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is usable only on node "worker-1"
      And the allocation of claim "training" carries no binding conditions
      And no event "BindingConditionsPending" is recorded for pod "trainer"

  Rule: KEP-5007/PREBIND-STATUS-ONLY  Only a condition's status counts: not its reason, message or time, and a failure condition that is not True is no failure

    # A condition written before the claim was allocated is still the device's state: a scheduler that takes
    # conditions older than the allocation for stale keeps the pod waiting in the second row.
    Scenario Outline: A True binding condition with reason <reason> and lastTransitionTime <time> lets the pod bind
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer" with reason "<reason>", message "<message>" and lastTransitionTime "<time>"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

      Examples:
        | reason                | message                                       | time                 |
        | Attached              |                                               | now                  |
        | FabricPathEstablished | link trained at x16 after two retries (fw 3.1) | 2020-01-01T00:00:00Z |

    Scenario Outline: A failure condition set to <status> is no failure: the pod binds once the device is attached
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attach-failed" to "<status>" on the device of pod "trainer" with reason "Checked", message "no fault found" and lastTransitionTime "now"
      And the scheduler runs
      Then pod "trainer" waits in PreBind
      # Waiting is not enough: a scheduler that gave the binding up would allocate again and wait anew.
      And no event "FailedScheduling" is recorded for pod "trainer"
      When the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer" with reason "Attached", message "" and lastTransitionTime "now"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

      Examples:
        | status  |
        | False   |
        | Unknown |

  Rule: KEP-5007/PREBIND-FAILURE  Any of a device's failure conditions, True, aborts the binding

    Scenario Outline: The <which> of two failure conditions, True, aborts the binding and the scheduler says which claim failed
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
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed, dra.example.com/link-down]
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When the driver sets condition "<condition>" to "True" on the device of pod "trainer" with reason "Broken", message "the device cannot be used" and lastTransitionTime "now"
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind because claim "training" failed to bind

      Examples:
        | which  | condition                    |
        | first  | dra.example.com/attach-failed |
        | second | dra.example.com/link-down     |

  Rule: KEP-5007/MULTI-CLAIM  A pod's binding waits for all its claims and a failure in any of them aborts it

    @rule:KEP-3063/UNSCHEDULABLE-EXPLAINED
    Scenario: Of a pod's two claims, the one whose device failed is the one the scheduler names
      Given the objects of manifest "fabric-two-gpus.yaml"
      And a claim "model" for one "fabric-gpu" device
      And a claim "scratch" for one "fabric-gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "model"
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the devices of claim "scratch"
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind because claim "scratch" failed to bind

  Rule: KEP-5007/TIMEOUT  A binding that waits past the timeout is given up

    @rule:KEP-3063/UNSCHEDULABLE-EXPLAINED
    Scenario: A claim whose device never becomes ready times out, and the scheduler says so for that claim
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When 10 minutes pass
      Then pod "trainer" was sent back from PreBind because claim "training" timed out binding
