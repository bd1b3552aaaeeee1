@kep-5007
Feature: The scheduler waits in PreBind until a pod's devices are ready (KEP-5007 PreBind process)

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"
    And the objects of manifest "fabric-two-gpus.yaml"

  Rule: KEP-5007/PREBIND-ALL-TRUE  Binding waits until every binding condition is True

    @shape:binding-conditions:one
    Scenario: A pod binds once the driver reports its device attached
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

    @shape:binding-conditions:several
    Scenario: A device with two binding conditions needs both
      Given the device class "fpga" selecting driver "fpga.example.com"
      And the ResourceSlice:
        """yaml
        metadata: {name: fpgas}
        spec:
          driver: fpga.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: fpga-0
            bindingConditions: [fpga.example.com/flashed, fpga.example.com/verified]
            bindingFailureConditions: [fpga.example.com/flash-failed]
        """
      And a pod "inference" with a claim for one "fpga" device
      When the scheduler runs
      And the driver sets condition "fpga.example.com/flashed" to "True" on the device of pod "inference"
      And the scheduler runs
      Then pod "inference" waits in PreBind
      When the driver sets condition "fpga.example.com/verified" to "True" on the device of pod "inference"
      And the scheduler runs
      Then pod "inference" is bound to node "worker-1"

  Rule: KEP-5007/PREBIND-STATUS-ONLY  Only a status of exactly "True" meets a condition

    Scenario Outline: A binding condition reported as <status> leaves the pod waiting
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "<status>" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" waits in PreBind

      # Other spellings ("true") never reach the scheduler: the API server accepts only True, False
      # and Unknown as a condition status. The scheduler's exact comparison is unit-tested.
      Examples:
        | status  |
        | False   |
        | Unknown |

    Scenario: A condition reported for one device of a claim does not count for its other device
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: fabric-gpu, count: 2}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on device "gpu-0" of claim "pair"
      And the scheduler runs
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attached" to "True" on device "gpu-1" of claim "pair"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

  Rule: KEP-5007/PREBIND-NO-CONDITIONS  A pod whose devices need no preparation binds without waiting

    Scenario: A node-local device without binding conditions is used at once
      Given the device class "local-gpu" selecting driver "local.example.com"
      And node "worker-1" has 1 devices "local" of driver "local.example.com"
      And a pod "trainer" with a claim for one "local-gpu" device
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And no event "BindingConditionsPending" is recorded for pod "trainer"
      And the allocation of the claim of pod "trainer" carries no binding conditions

  Rule: KEP-5007/ALLOCATION-PERSISTED-BEFORE-WAIT  The claim records the allocation before the wait

    Scenario: While the pod waits its claim is already allocated and reserved for it
      Given a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      And claim "training" is allocated device "gpu-0"
      And claim "training" is reserved for pod "trainer"

  Rule: KEP-5007/EVENT-PENDING  A waiting pod says so in an event

    Scenario: The pod gets a Normal BindingConditionsPending event
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      Then a Normal event "BindingConditionsPending" is recorded for pod "trainer"
      And no event "FailedScheduling" is recorded for pod "trainer"

  Rule: KEP-5007/PREBIND-FAILURE  A True failure condition aborts binding and requeues the pod

    Scenario: The pod is not bound, its claim is cleared, and it is scheduled again
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind
      And the claim of pod "trainer" was cleared
      When 1 second passes
      Then pod "trainer" waits in PreBind

  Rule: KEP-5007/FAILURE-WINS  Failure beats readiness seen at the same time

    Scenario: All binding conditions and a failure condition are True together
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And the driver sets conditions "dra.example.com/attached" and "dra.example.com/attach-failed" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind
      And the claim of pod "trainer" was cleared

  Rule: KEP-5007/FAILURE-THROUGHOUT  Failure is watched for during the whole wait

    Scenario: A failure reported five minutes into the wait still aborts it
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 5 minutes pass
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attach-failed" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind

  Rule: KEP-5007/CLEAR-ALLOCATION  Clearing frees what the failing pod held, and only that

    Scenario: A cleared claim keeps no per-device status, so the next attempt starts clean
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then the claim of pod "trainer" was cleared with its per-device status
      When 1 second passes
      Then pod "trainer" waits in PreBind
      And the claim of pod "trainer" has no per-device status

    # kube-controller-manager would deallocate an unreserved claim anyway: with it down, what is
    # observed is the scheduler's own write.
    Scenario Outline: After a <ending> the scheduler itself clears the claim, with kube-controller-manager down
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And kube-controller-manager is stopped
      And <cause>
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind
      And the claim of pod "trainer" was cleared with its per-device status

      # Each row is also the scheduler's own half of its rule, which the controller would otherwise hide.
      @rule:KEP-5007/PREBIND-FAILURE
      Examples: a failure condition
        | ending  | cause                                                                                                    |
        | failure | the driver sets condition "dra.example.com/attach-failed" to "True" on the device of pod "trainer"       |

      @rule:KEP-5007/TIMEOUT
      Examples: the binding timeout
        | ending  | cause                                                                                                    |
        | timeout | 10 minutes pass                                                                                          |

    Scenario: A failing claim that a running pod still holds keeps its allocation
      Given a claim "shared" for one "fabric-gpu" device
      And a pod "first" using claim "shared"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "shared"
      And the scheduler runs
      Then pod "first" is bound to node "worker-1"
      When the driver sets condition "dra.example.com/attach-failed" to "True" on the devices of claim "shared"
      And a pod "second" using claim "shared" is created
      And the scheduler runs
      Then pod "second" is not scheduled
      And a Warning event "FailedScheduling" is recorded for pod "second"
      And claim "shared" is allocated device "gpu-0"
      And claim "shared" is reserved for pod "first"
      And pod "first" is bound to node "worker-1"

  Rule: KEP-5007/MULTI-CLAIM  A pod with several claims waits for all of them

    @shape:pod-claims:several
    Scenario: The pod binds only after the devices of both its claims are ready
      Given a claim "model" for one "fabric-gpu" device
      And a claim "scratch" for one "fabric-gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "model"
      And the scheduler runs
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "scratch"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

    Scenario: A failure in one of the claims aborts the pod's binding
      Given a claim "model" for one "fabric-gpu" device
      And a claim "scratch" for one "fabric-gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "model"
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the devices of claim "scratch"
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind
      And claim "scratch" was cleared
