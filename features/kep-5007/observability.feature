@kep-5007
Feature: Operators see binding conditions at work in the scheduler's metrics (KEP-5007 monitoring)

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"
    And the device class "local-gpu" selecting driver "local.example.com"
    And node "worker-1" has 1 devices "local" of driver "local.example.com"
    And the ResourceSlice:
      """yaml
      metadata: {name: fabric}
      spec:
        driver: gpu.example.com
        pool: {name: fabric, generation: 1, resourceSliceCount: 1}
        allNodes: true
        devices:
        - {name: gpu-0, bindsToNode: true, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
        - {name: gpu-1, bindsToNode: true, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
        - {name: gpu-2, bindsToNode: true, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
        - {name: gpu-3, bindsToNode: true, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
      """

  Rule: KEP-5007/METRIC-ALLOCATIONS  Each PreBind that needed binding conditions is counted by outcome

    Scenario: One success, one failure and one timeout are counted under their status
      Given a pod "ready" with a claim for one "fabric-gpu" device
      And a pod "broken" with a claim for one "fabric-gpu" device
      And a pod "forgotten" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the device of pod "ready"
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the device of pod "broken"
      And 10 minutes pass
      Then the metric "scheduler_dra_bindingconditions_allocations_total" with labels "status=success" is 1
      And the metric "scheduler_dra_bindingconditions_allocations_total" with labels "status=failure" is 1
      And the metric "scheduler_dra_bindingconditions_allocations_total" with labels "status=timeout" is 1

    Scenario: A pod whose device needs no binding conditions is not counted
      Given a pod "plain" with a claim for one "local-gpu" device
      When the scheduler runs
      Then pod "plain" is bound to node "worker-1"
      And the metric "scheduler_dra_bindingconditions_allocations_total" is 0

  Rule: KEP-5007/METRIC-PREBIND-DURATION  PreBind's duration is observed by outcome and need for conditions

    # Upstream has no such histogram, only the wait's (the rule's upstream_divergences).
    @upstream-differs:bindingconditions-wait-histogram
    Scenario: A wait of 90 seconds is observed as a successful PreBind that required binding conditions
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 90 seconds pass
      And the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And the histogram "scheduler_dra_bindingconditions_prebind_duration_seconds" with labels "status=success, requires_bindingconditions=true" has 1 observation summing to 90 seconds

    @upstream-differs:bindingconditions-wait-histogram
    Scenario: A PreBind without binding conditions is observed with requires_bindingconditions false
      Given a pod "plain" with a claim for one "local-gpu" device
      When the scheduler runs
      Then the histogram "scheduler_dra_bindingconditions_prebind_duration_seconds" with labels "status=success, requires_bindingconditions=false" has 1 observation summing to 0 seconds
      And the histogram "scheduler_dra_bindingconditions_prebind_duration_seconds" with labels "requires_bindingconditions=true" has 0 observations

    @upstream-differs:bindingconditions-wait-histogram
    Scenario: A timed-out wait is observed with status timeout and the full timeout as its duration
      Given a pod "forgotten" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 10 minutes pass
      Then the histogram "scheduler_dra_bindingconditions_prebind_duration_seconds" with labels "status=timeout, requires_bindingconditions=true" has 1 observation summing to 600 seconds
