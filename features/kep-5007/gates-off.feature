@kep-5007
Feature: With either binding gate off, each step of the binding flow stays out of the way (KEP-5007, per rule)

  The gate-off side of the rules of the binding flow, one outline per situation with an Examples table per rule
  (the table's tag places its rows under that rule). Three situations: the gate is off in every component, so the
  API server drops the binding fields and the device is a plain one; the gate is off in kube-scheduler only, so a
  device that keeps its binding conditions is never picked; a scheduler turned off under a claim that was
  allocated with binding conditions, which it then neither waits on nor clears (upstream's PreBind returns before
  the wait and its Filter judges no readiness or timeout with either gate off; read in v1.36.2's
  pkg/scheduler/framework/plugins/dynamicresources). The rows without a gate name run at the current release,
  where both gates are on by default. No row turns DRAResourceClaimDeviceStatus off alone: from 1.35 a component
  with DRADeviceBindingConditions on and DRAResourceClaimDeviceStatus off refuses to start (a gate dependency), so
  the status gate is off here only together with the binding gate.

  Background:
    Given a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"

  Rule: KEP-5007/GATES-BOTH-REQUIRED  With either gate off the scheduler behaves as without the feature, each rule of the flow included

    Scenario Outline: With <gate> off in every component, the pod binds at once: <what>
      Given a cluster with feature gates "<gate>" off
      And the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And <check>

      @rule:KEP-5007/ALLOCATION-TIMESTAMP
      Examples: the scheduler stamps no allocation
        | gate                         | what               | check                                       |
        | DRADeviceBindingConditions   | no timestamp       | claim "training" has no allocationTimestamp |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | no timestamp | claim "training" has no allocationTimestamp |

      @rule:KEP-5007/RESULT-COPIES-CONDITIONS
      Examples: nothing to copy
        | gate                         | what       | check                                                            |
        | DRADeviceBindingConditions   | no copies  | the allocation of claim "training" carries no binding conditions |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | no copies | the allocation of claim "training" carries no binding conditions |

      @rule:KEP-5007/BINDS-TO-NODE
      Examples: bindsToNode is gone with the other fields
        | gate                         | what        | check                                   |
        | DRADeviceBindingConditions   | not pinned  | claim "training" is usable on every node |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | not pinned | claim "training" is usable on every node |

      @rule:KEP-5007/EVENT-PENDING
      Examples: nothing waits, so nothing says it waits
        | gate                         | what     | check                                                            |
        | DRADeviceBindingConditions   | no event | no event "BindingConditionsPending" is recorded for pod "trainer" |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | no event | no event "BindingConditionsPending" is recorded for pod "trainer" |

      @rule:KEP-5007/PREBIND-NO-CONDITIONS
      Examples: the device needs nothing now
        | gate                         | what               | check                                      |
        | DRADeviceBindingConditions   | the device is used | claim "training" is allocated device "gpu-0" |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | the device is used | claim "training" is allocated device "gpu-0" |

      @rule:KEP-5007/ALLOCATION-PERSISTED-BEFORE-WAIT @rule:KEP-5007/CONTROLLER-OUTAGE
      Examples: allocated and reserved with no controller to wait for
        | gate                         | what                | check                                       |
        | DRADeviceBindingConditions   | reserved, no wait   | claim "training" is reserved for pod "trainer" |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | reserved, no wait | claim "training" is reserved for pod "trainer" |

      # Upstream registers the counter only with the gate on; absent reads as 0.
      @rule:KEP-5007/METRIC-ALLOCATIONS
      Examples: nothing counted
        | gate                         | what          | check                                                                   |
        | DRADeviceBindingConditions   | not counted   | the metric "scheduler_dra_bindingconditions_allocations_total" is 0 |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | not counted | the metric "scheduler_dra_bindingconditions_allocations_total" is 0 |

    # kube-scheduler is stopped while the pod waits, the claim's state is written, and the scheduler comes back
    # with the gate off: it binds the pod at once and leaves the claim as it is.
    Scenario Outline: A pod waiting in PreBind is bound at once by a scheduler back with <gate> off after <while>
      Given the objects of manifest "fabric-two-gpus.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When kube-scheduler is stopped
      And <event>
      And kube-scheduler restarts with feature gates "<gate>=off"
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is allocated device "gpu-0"
      And claim "training" is reserved for pod "trainer"

      @rule:KEP-5007/PREBIND-ALL-TRUE
      Examples: no condition reported
        | gate                         | while                  | event            |
        | DRADeviceBindingConditions   | a minute of no answer  | 1 minute passes  |

      @rule:KEP-5007/RESTART-RESUMES
      Examples: a restart does not bring the wait back
        | gate                         | while             | event             |
        | DRADeviceBindingConditions   | eight minutes     | 8 minutes pass    |

      @rule:KEP-5007/PREBIND-STATUS-ONLY
      Examples: the condition's status is not read
        | gate                         | while             | event                                                                                        |
        | DRADeviceBindingConditions   | a False condition | the driver sets condition "dra.example.com/attached" to "False" on the devices of claim "training" |

      @rule:KEP-5007/PREBIND-FAILURE
      Examples: a failure condition is not read
        | gate                         | while     | event                                                                                              |
        | DRADeviceBindingConditions   | a failure | the driver sets condition "dra.example.com/attach-failed" to "True" on the devices of claim "training" |

      @rule:KEP-5007/FAILURE-WINS
      Examples: readiness and failure together
        | gate                         | while                  | event                                                                                                                         |
        | DRADeviceBindingConditions   | readiness and failure  | the driver sets conditions "dra.example.com/attached" and "dra.example.com/attach-failed" to "True" on the devices of claim "training" |

      @rule:KEP-5007/TIMEOUT
      Examples: the binding timeout passes
        | gate                         | while       | event            |
        | DRADeviceBindingConditions   | ten minutes | 10 minutes pass  |

      @rule:KEP-5007/TIMEOUT-DEFAULT
      Examples: well past the default timeout
        | gate                         | while          | event            |
        | DRADeviceBindingConditions   | eleven minutes | 11 minutes pass  |

    Scenario Outline: After a failure, a scheduler back with <gate> off leaves the claim and its conditions as they are
      Given the objects of manifest "fabric-two-gpus.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      And 5 minutes pass
      And kube-scheduler is stopped
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the devices of claim "training"
      And kube-scheduler restarts with feature gates "<gate>=off"
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" was allocated 5 minutes ago
      And claim "training" reports condition "dra.example.com/attach-failed" as "True" for device "gpu-0"

      @rule:KEP-5007/CLEAR-ALLOCATION @rule:KEP-5007/FAILURE-THROUGHOUT
      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |

    Scenario Outline: With <gate> off, a failure on one of a pod's two claims does not hold the pod back
      Given the objects of manifest "fabric-two-gpus.yaml"
      And a claim "model" for one "fabric-gpu" device
      And a claim "scratch" for one "fabric-gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      When kube-scheduler is stopped
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "model"
      And the driver sets condition "dra.example.com/attach-failed" to "True" on the devices of claim "scratch"
      And kube-scheduler restarts with feature gates "<gate>=off"
      Then pod "trainer" is bound to node "worker-1"
      And claim "model" is reserved for pod "trainer"
      And claim "scratch" is reserved for pod "trainer"

      @rule:KEP-5007/MULTI-CLAIM
      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |

    # A second pod joins a claim allocated eight minutes earlier: with the gate on it gets two minutes; off, no
    # deadline at all.
    Scenario Outline: With <gate> off in kube-scheduler, a pod joining an old claim with binding conditions binds at once
      Given the objects of manifest "fabric-two-gpus.yaml"
      And a claim "shared" for one "fabric-gpu" device
      And a pod "first" using claim "shared"
      When the scheduler runs
      And 8 minutes pass
      And kube-scheduler restarts with feature gates "<gate>=off"
      And a pod "second" using claim "shared" is created
      And the scheduler runs
      And 5 minutes pass
      Then pod "first" is bound to node "worker-1"
      And pod "second" is bound to node "worker-1"
      And claim "shared" was allocated 13 minutes ago

      @rule:KEP-5007/TIMEOUT-ANCHOR
      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |

    # The claim of timeout.feature's TIMEOUT-WITHOUT-TIMESTAMP scenario, met by a scheduler with the gate off.
    Scenario Outline: With <gate> off in kube-scheduler, a pod using a claim allocated without a timestamp binds at once
      Given kube-scheduler with feature gates "<gate>=off"
      And the objects of manifest "fabric-one-gpu.yaml"
      And a claim "legacy" for one "fabric-gpu" device
      And the Pod:
        """yaml
        metadata: {name: holder}
        spec:
          schedulerName: another-scheduler
          nodeName: worker-1
          containers: [{name: main, image: registry.example/app:1}]
          resourceClaims: [{name: gpu, resourceClaimName: legacy}]
        """
      And the status of claim "legacy" is:
        """yaml
        allocation:
          devices:
            results:
            - request: device
              driver: gpu.example.com
              pool: fabric
              device: gpu-0
              bindingConditions: [dra.example.com/attached]
              bindingFailureConditions: [dra.example.com/attach-failed]
          nodeSelector:
            nodeSelectorTerms:
            - matchFields:
              - {key: metadata.name, operator: In, values: [worker-1]}
        reservedFor:
        - {resource: pods, name: holder}
        """
      When 5 minutes pass
      And a pod "trainer" using claim "legacy" is created
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "legacy" has no allocationTimestamp
      When 15 minutes pass
      Then pod "trainer" is bound to node "worker-1"
      And claim "legacy" is allocated device "gpu-0"

      @rule:KEP-5007/TIMEOUT-WITHOUT-TIMESTAMP
      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |
