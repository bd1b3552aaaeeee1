@kep-5007
Feature: An external binding controller drives the wait through the claim's status (KEP-5007 external controllers)

  The reference binding controller is programmable: it marks devices ready or failed some time after
  it sees them allocated, or never answers. It acts only through the API, as a deployed one would.

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"
    And the objects of manifest "fabric-two-gpus.yaml"

  Rule: KEP-5007/CONTROLLER-REPORTS-READINESS  The controller reports readiness as standard per-device conditions

    # Short enough for a live cluster's real-time clock budget: the controller runs as its own process there.
    Scenario: A controller that answers within a second gets the pod bound with its condition set
      Given the binding controller for driver "gpu.example.com" marks devices ready after 1 second
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 1 second passes
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" reports condition "dra.example.com/attached" as "True" for device "gpu-0"

    Scenario: A controller that needs two minutes to attach the device gets the pod bound after two minutes
      Given the binding controller for driver "gpu.example.com" marks devices ready after 2 minutes
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 119 seconds pass
      Then pod "trainer" waits in PreBind
      When 1 second passes
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" reports condition "dra.example.com/attached" as "True" for device "gpu-0"

    Scenario: A device with two binding conditions is bound once the controller has reported both
      Given the binding controller for driver "gpu.example.com" marks devices ready after 2 minutes
      When the ResourceSlice "fabric" is replaced with:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 2, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/attached, dra.example.com/firmware-loaded]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And a pod "trainer" with a claim for one "fabric-gpu" device is created
      And the scheduler runs
      And 2 minutes pass
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" reports condition "dra.example.com/attached" as "True" for device "gpu-0"
      And the claim of pod "trainer" reports condition "dra.example.com/firmware-loaded" as "True" for device "gpu-0"

  Rule: KEP-5007/CONTROLLER-FAILURE-NOT-REPICKED  A controller that reports a failure keeps the device from being picked again

    # The rule's tolerance: the withdrawal may reach the scheduler after its next attempt, so the failed
    # device may be picked once more (and fail again) before the pod gets the other one.
    Scenario: The failed device is withdrawn and the rescheduled pod gets the other device
      Given the binding controller for driver "gpu.example.com" marks devices failed after 30 seconds and withdraws them
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      Then the claim of pod "trainer" is allocated device "gpu-0"
      When 30 seconds pass
      Then pod "trainer" was sent back from PreBind
      When 1 second passes
      Then the claim of pod "trainer" is allocated device "gpu-1", after at most the tolerated re-picks of the failed device "gpu-0", each failing within 40 seconds
      And pod "trainer" waits in PreBind
      And ResourceSlice "fabric" publishes device "gpu-1"

  Rule: KEP-5007/CONTROLLER-OUTAGE  Without answers pods stay pending, retried after each timeout

    Scenario: A silent controller leaves the pod pending through two timeouts; once it answers the pod binds
      Given the binding controller for driver "gpu.example.com" never answers
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When 25 minutes pass
      Then pod "trainer" waits in PreBind
      # Two timeouts, each followed by a new allocation: the newest is less than ten minutes old. (Read from the
      # claim, not from the scheduler's metrics, whose names this controller rule does not judge.)
      And the claim of pod "trainer" was allocated less than 10 minutes ago
      When the binding controller for driver "gpu.example.com" is deployed and marks devices ready after 10 seconds
      And 10 seconds pass
      Then pod "trainer" is bound to node "worker-1"
