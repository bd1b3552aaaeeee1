@kep-5007
Feature: Version skew, rollout and rollback of binding conditions (KEP-5007 upgrade, skew, PRR)

  Background:
    Given a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"

  Rule: KEP-5007/GATES-BOTH-REQUIRED  The scheduler uses binding conditions only with both gates on

    # One row per kind of scheduler the KEP's Version Skew Strategy talks about (docs/decisions.md D-5007-7).
    Scenario Outline: A device with binding conditions and <scheduler>
      Given kube-scheduler version "<version>" with feature gates "<gates>"
      And the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" <outcome>
      And claim "training" <claim>

      Examples: current scheduler, both gates on
        | scheduler                        | version | gates    | outcome          | claim                       |
        | a current scheduler              | current | defaults | waits in PreBind | is allocated device "gpu-0" |

      # A pod that waits in PreBind is not scheduled either: the claim tells the two apart.
      @rule:KEP-5007/SKEW-GATE-OFF-SCHEDULER
      Examples: current scheduler with a gate off
        | scheduler                                  | version | gates                              | outcome          | claim            |
        | DRADeviceBindingConditions off             | current | DRADeviceBindingConditions=off     | is not scheduled | is not allocated |
        | 1.34 with only DRAResourceClaimDeviceStatus off | 1.34 | DRADeviceBindingConditions=on, DRAResourceClaimDeviceStatus=off | is not scheduled | is not allocated |

      # 1.35: the release before DRADeviceBindingConditions turned on by default; its alpha gate is off there.
      @rule:KEP-5007/SKEW-GATE-OFF-SCHEDULER
      Examples: a scheduler of the release before the default changed
        | scheduler                        | version | gates    | outcome          | claim            |
        | a 1.35 scheduler with its defaults | 1.35  | defaults | is not scheduled | is not allocated |

      @rule:KEP-5007/SKEW-OLDER-SCHEDULER
      Examples: a scheduler older than the feature
        | scheduler                        | version | gates    | outcome                      | claim                       |
        | a 1.33 scheduler                 | 1.33    | defaults | is bound to node "worker-1"  | is allocated device "gpu-0" |

  Rule: KEP-5007/SKEW-OLDER-SCHEDULER  An older scheduler ignores the fields it does not know

    Scenario: A 1.33 scheduler binds at once and writes neither copies nor a timestamp
      Given kube-scheduler version "1.33" with feature gates "defaults"
      And the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And the allocation of claim "training" carries no binding conditions
      And claim "training" has no allocationTimestamp
      And claim "training" is usable on every node

  Rule: KEP-5007/SKEW-GATE-OFF-SCHEDULER  A current scheduler with a gate off never picks such devices

    @upstream-differs:binds-to-node-honoured-with-gate-off
    Scenario: With the gate off the scheduler takes the device without conditions and ignores bindsToNode
      Given kube-scheduler with feature gates "DRADeviceBindingConditions=off"
      And the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - {name: gpu-0, bindsToNode: true, bindingConditions: [dra.example.com/attached], bindingFailureConditions: [dra.example.com/attach-failed]}
          - {name: gpu-1, bindsToNode: true}
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is allocated device "gpu-1"
      And claim "training" is usable on every node
      And claim "training" has no allocationTimestamp

  Rule: KEP-5007/ROLLOUT-NO-CONTROLLER  Devices with binding conditions and no controller: repeated timeouts

    # The KEP's safe rollout order, one row per stage reached: API server gate, scheduler gate,
    # driver publishing devices with binding conditions, binding controller. In the last row the
    # order was reversed: the API server drops the fields, so the pod binds before any preparation.
    Scenario Outline: Rollout stopped after <stage>
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler with feature gates "<scheduler>"
      And the objects of manifest "fabric-one-gpu.yaml"
      And <controller>
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When 25 minutes pass
      Then pod "trainer" <outcome>
      And the metric "scheduler_dra_bindingconditions_allocations_total" with labels "status=timeout" is <timeouts>

      Examples:
        | stage                                   | apiserver | scheduler                      | controller                                                                          | outcome                     | timeouts |
        | all four steps                          | defaults  | defaults                       | the binding controller for driver "gpu.example.com" marks devices ready after 30 seconds | is bound to node "worker-1" | 0        |
        | the driver, without its controller      | defaults  | defaults                       | no binding controller is deployed for driver "gpu.example.com"                      | waits in PreBind            | 2        |
        | the API server, scheduler gate still off | defaults  | DRADeviceBindingConditions=off | no binding controller is deployed for driver "gpu.example.com"                      | is not scheduled            | 0        |
        | the scheduler, API server gate still off | DRADeviceBindingConditions=off | defaults | no binding controller is deployed for driver "gpu.example.com"               | is bound to node "worker-1" | 0        |

  Rule: KEP-5007/DISABLE-KEEPS-WORKLOADS  Turning the feature off leaves running pods and their claims alone

    Scenario Outline: Turning <gate> off in <component> keeps the bound pod and its claim as they were
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "training"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      When <component> restarts with feature gates "<gate>=off"
      And 15 minutes pass
      # A later write to the claim must not lose what the stored allocation already has.
      And the driver sets condition "dra.example.com/healthy" to "True" on the devices of claim "training"
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is allocated device "gpu-0"
      And claim "training" is reserved for pod "trainer"
      And the allocation of claim "training" copies binding conditions "dra.example.com/attached" and failure conditions "dra.example.com/attach-failed"
      And claim "training" was allocated 15 minutes ago

      Examples:
        | component      | gate                         |
        | kube-scheduler | DRADeviceBindingConditions   |
        | kube-apiserver | DRADeviceBindingConditions   |

  Rule: KEP-5007/DOWNGRADED-APISERVER  An API server older than the feature leaves the workload alone but keeps none of the fields

    # The same bound pod and later status write as above, through a current API server with the gate off
    # or through a 1.33 one, which has no binding fields in its types; read afterwards by a current one.
    Scenario Outline: kube-apiserver restarts as <server> under a bound pod, and the driver then writes the claim's status
      Given the objects of manifest "fabric-one-gpu.yaml"
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "training"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      When kube-apiserver restarts as version "<release>" with feature gates "<gates>"
      And the driver sets condition "dra.example.com/healthy" to "True" on the devices of claim "training"
      And kube-apiserver restarts as version "current" with feature gates "defaults"
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is allocated device "gpu-0"
      And claim "training" is reserved for pod "trainer"
      And <copies>
      And <timestamp>

      Examples:
        | server                         | release | gates                          | copies                                                                                                                       | timestamp                                   |
        | DRADeviceBindingConditions off | current | DRADeviceBindingConditions=off | the allocation of claim "training" copies binding conditions "dra.example.com/attached" and failure conditions "dra.example.com/attach-failed" | claim "training" was allocated 0 seconds ago |
        | 1.33                           | 1.33    | defaults                       | the allocation of claim "training" carries no binding conditions                                                             | claim "training" has no allocationTimestamp |

  Rule: KEP-5007/REENABLE-RESUMES  Turned back on, the feature works again

    Scenario Outline: After <gate> is turned back on a new pod waits for its device again
      Given kube-scheduler with feature gates "<gate>=off"
      And the objects of manifest "fabric-one-gpu.yaml"
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      Then pod "trainer" is not scheduled
      When kube-scheduler restarts with feature gates "<gate>=on"
      Then pod "trainer" waits in PreBind
      When the driver sets condition "dra.example.com/attached" to "True" on the device of pod "trainer"
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |
