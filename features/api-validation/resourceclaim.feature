@api-validation
Feature: What a claim may ask for (resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate spec)

  Rule: DRA-API/CLAIM-MAX-REQUESTS  At most 32 requests per claim

    @shape:requests:max @shape:requests:over-max
    Scenario Outline: A claim with <count> requests
      When the user creates the ResourceClaim "one-gpu" from the manifests with:
        | field                 | value           |
        | spec.devices.requests | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                       |
        | 32    | accepted                                                                      |
        | 33    | rejected at "spec.devices.requests" by rule "DRA-API/CLAIM-MAX-REQUESTS"      |

  Rule: DRA-API/CLAIM-REQUEST-NAMES  Request names are unique DNS labels

    Scenario Outline: Requests named <first> and <second>
      When the user creates the ResourceClaim "gpu-and-nic" from the manifests with:
        | field                         | value      |
        | spec.devices.requests[0].name | "<first>"  |
        | spec.devices.requests[1].name | "<second>" |
      Then the request is <outcome>

      Examples:
        | first | second | outcome                                                                                     |
        | gpu   | nic    | accepted                                                                                    |
        | gpu   | gpu    | rejected at "spec.devices.requests[1]" by rule "DRA-API/CLAIM-REQUEST-NAMES" as a duplicate |
        | gpu   | my_nic | rejected at "spec.devices.requests[1].name" by rule "DRA-API/CLAIM-REQUEST-NAMES"           |

  Rule: DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE  A request is either exact or a prioritized list

    Scenario Outline: A request with <shape>
      When the user creates the ResourceClaim "one-gpu" from the manifests with:
        | field                                   | value     |
        | spec.devices.requests[0].exactly        | <exactly> |
        | spec.devices.requests[0].firstAvailable | <first>   |
      Then the request is <outcome>

      Examples:
        | shape   | exactly                            | first                                              | outcome                                                                                     |
        | exactly | {deviceClassName: gpu.example.com} | (absent)                                           | accepted                                                                                    |
        | a list  | (absent)                           | [{name: big, deviceClassName: gpu.example.com}]    | accepted                                                                                    |
        | both    | {deviceClassName: gpu.example.com} | [{name: big, deviceClassName: gpu.example.com}]    | rejected at "spec.devices.requests[0]" by rule "DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE" |
        | neither | (absent)                           | (absent)                                           | rejected at "spec.devices.requests[0]" by rule "DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE" |

  Rule: DRA-API/FIRST-AVAILABLE-SUBREQUESTS  1 to 8 subrequests with unique DNS-label names

    @shape:subrequests:max @shape:subrequests:over-max
    Scenario Outline: A prioritized list of <count> subrequests
      When the user creates the ResourceClaim "gpu-from-a-list" from the manifests with:
        | field                                   | value           |
        | spec.devices.requests[0].firstAvailable | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                                                  |
        | 8     | accepted                                                                                                 |
        | 9     | rejected at "spec.devices.requests[0].firstAvailable" by rule "DRA-API/FIRST-AVAILABLE-SUBREQUESTS"      |

    # Shapes walk (issue 39): an empty list is no list. kube-apiserver takes a request whose firstAvailable is
    # empty for one with neither form (validateDeviceRequest counts the list only when it has items), refused as
    # the gate-off rows below are.
    @shape:subrequests:empty
    Scenario: An empty prioritized list counts as none
      When the user creates the ResourceClaim "gpu-from-a-list" from the manifests with:
        | field                                   | value |
        | spec.devices.requests[0].firstAvailable | []    |
      Then the request is rejected at "spec.devices.requests[0]" by rule "DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE"

    @shape:subrequests:duplicate
    Scenario Outline: Subrequests named <first> and <second>
      When the user creates the ResourceClaim "gpu-from-a-list" from the manifests with:
        | field                                           | value      |
        | spec.devices.requests[0].firstAvailable[0].name | "<first>"  |
        | spec.devices.requests[0].firstAvailable[1].name | "<second>" |
      Then the request is <outcome>

      Examples:
        | first | second | outcome                                                                                                               |
        | big   | small  | accepted                                                                                                              |
        | big   | big    | rejected at "spec.devices.requests[0].firstAvailable[1]" by rule "DRA-API/FIRST-AVAILABLE-SUBREQUESTS" as a duplicate |

    # With the gate off kube-apiserver drops firstAvailable before it validates (upstream's
    # resourceclaimspec.DropDisabledFields), so the request is left with neither form: refused for that, whatever
    # the list held, and never for the list's own faults.
    Scenario Outline: With DRAPrioritizedList off in kube-apiserver, a prioritized list of <count> subrequests
      Given kube-apiserver with feature gates "DRAPrioritizedList=off"
      When the user creates the ResourceClaim "gpu-from-a-list" from the manifests with:
        | field                                   | value           |
        | spec.devices.requests[0].firstAvailable | (<count> items) |
      Then the request is rejected at "spec.devices.requests[0]" by rule "DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE"

      Examples:
        | count |
        | 8     |
        | 9     |

  Rule: DRA-API/REQUEST-CLASS-NAME  Every request names a device class

    Scenario Outline: A request for class "<class>"
      When the user creates the ResourceClaim "one-gpu" from the manifests with:
        | field                                            | value     |
        | spec.devices.requests[0].exactly.deviceClassName | "<class>" |
      Then the request is <outcome>

      Examples:
        | class           | outcome                                                                                           |
        | gpu.example.com | accepted                                                                                          |
        |                 | rejected at "spec.devices.requests[0].exactly.deviceClassName" by rule "DRA-API/REQUEST-CLASS-NAME" |
        | GPU_Class       | rejected at "spec.devices.requests[0].exactly.deviceClassName" by rule "DRA-API/REQUEST-CLASS-NAME" |

  Rule: DRA-API/REQUEST-ALLOCATION-MODE  ExactCount with a positive count, or All without one

    Scenario Outline: Allocation mode <mode> with count <count>
      When the user creates the ResourceClaim "one-gpu" from the manifests with:
        | field                                           | value   |
        | spec.devices.requests[0].exactly.allocationMode | <mode>  |
        | spec.devices.requests[0].exactly.count          | <count> |
      Then the request is <outcome>

      Examples:
        | mode       | count | outcome                                                                                            |
        | ExactCount | 2     | accepted                                                                                           |
        | All        | 0     | accepted                                                                                           |
        | ExactCount | 0     | accepted                                                                                           |
        | ExactCount | -1    | rejected at "spec.devices.requests[0].exactly.count" by rule "DRA-API/REQUEST-ALLOCATION-MODE"     |
        | All        | 2     | rejected at "spec.devices.requests[0].exactly.count" by rule "DRA-API/REQUEST-ALLOCATION-MODE"     |
        | Some       | 2     | rejected at "spec.devices.requests[0].exactly.allocationMode" by rule "DRA-API/REQUEST-ALLOCATION-MODE" |

    Scenario Outline: A request with count <count> is stored as ExactCount asking for <stored>
      When the user creates the ResourceClaim "one-gpu" from the manifests with:
        | field                                  | value   |
        | spec.devices.requests[0].exactly.count | <count> |
      Then the request is accepted
      And the stored ResourceClaim "one-gpu" has field "spec.devices.requests[0].exactly.count" set to <stored>
      And the stored ResourceClaim "one-gpu" has field "spec.devices.requests[0].exactly.allocationMode" set to ExactCount

      Examples:
        | count    | stored |
        | (absent) | 1      |
        | 0        | 1      |
        | 3        | 3      |

  Rule: DRA-API/TOLERATIONS-MAX  At most 16 tolerations per request

    @shape:tolerations:max @shape:tolerations:over-max
    Scenario Outline: A request with <count> tolerations
      When the user creates the ResourceClaim "gpu-tolerating-maintenance" from the manifests with:
        | field                                        | value           |
        | spec.devices.requests[0].exactly.tolerations | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome  |
        | 16    | accepted |

      # Upstream does not count tolerations (the rule's upstream_divergences).
      @upstream-differs:tolerations-over-16
      Examples: one too many, which upstream accepts
        | count | outcome                                                                                      |
        | 17    | rejected at "spec.devices.requests[0].exactly.tolerations" by rule "DRA-API/TOLERATIONS-MAX" |

  Rule: DRA-API/TOLERATION-FORMAT  Known operators and effects; Exists takes no value; an empty key with Equal is accepted

    Scenario Outline: A toleration <toleration>
      When the user creates the ResourceClaim "gpu-tolerating-maintenance" from the manifests with:
        | field                                           | value        |
        | spec.devices.requests[0].exactly.tolerations[0] | <toleration> |
      Then the request is <outcome>

      Examples:
        | toleration                                                        | outcome                                                                                                 |
        | {key: example.com/ecc, operator: Equal, value: many, effect: NoSchedule} | accepted                                                                                         |
        | {operator: Exists}                                                | accepted                                                                                                |
        | {key: example.com/ecc, operator: Exists, value: many}             | rejected at "spec.devices.requests[0].exactly.tolerations[0].value" by rule "DRA-API/TOLERATION-FORMAT"    |
        | {value: many}                                                     | accepted                                                                                                |
        | {effect: NoSchedule}                                              | accepted                                                                                                |
        | {key: example.com/ecc, operator: Like}                            | rejected at "spec.devices.requests[0].exactly.tolerations[0].operator" by rule "DRA-API/TOLERATION-FORMAT" |
        | {key: example.com/ecc, operator: Exists, effect: Evict}           | rejected at "spec.devices.requests[0].exactly.tolerations[0].effect" by rule "DRA-API/TOLERATION-FORMAT"   |

    # With DRADeviceTaints off kube-apiserver drops a request's tolerations before it validates: a faulty one is
    # not refused, it is gone.
    Scenario Outline: With DRADeviceTaints off in kube-apiserver, a toleration <toleration> is dropped
      Given kube-apiserver with feature gates "DRADeviceTaints=off, DRADeviceTaintRules=off"
      When the user creates the ResourceClaim "gpu-tolerating-maintenance" from the manifests with:
        | field                                           | value        |
        | spec.devices.requests[0].exactly.tolerations[0] | <toleration> |
      Then the request is accepted
      And the stored ResourceClaim "gpu-tolerating-maintenance" has no field "spec.devices.requests[0].exactly.tolerations"

      Examples:
        | toleration                                                                |
        | {key: example.com/ecc, operator: Equal, value: many, effect: NoSchedule} |
        | {key: example.com/ecc, operator: Like}                                    |

  Rule: DRA-API/CONSTRAINT-ONE-OF  At most 32 constraints, each matchAttribute or distinctAttribute

    Scenario Outline: A constraint with <shape>
      When the user creates the ResourceClaim "two-gpus-same-numa" from the manifests with:
        | field                       | value        |
        | spec.devices.constraints[0] | <constraint> |
      Then the request is <outcome>

      Examples:
        | shape          | constraint                                                                          | outcome                                                                                 |
        | matchAttribute | {matchAttribute: gpu.example.com/numa}                                              | accepted                                                                                |
        | neither        | {requests: [gpu]}                                                                   | rejected at "spec.devices.constraints[0]" by rule "DRA-API/CONSTRAINT-ONE-OF"           |

      # Upstream checks only the first kind it finds set (the rule's upstream_divergences).
      @upstream-differs:constraint-both-kinds
      Examples: both kinds, which upstream accepts
        | shape | constraint                                                                      | outcome                                                                       |
        | both  | {matchAttribute: gpu.example.com/numa, distinctAttribute: gpu.example.com/uuid} | rejected at "spec.devices.constraints[0]" by rule "DRA-API/CONSTRAINT-ONE-OF" |

    @shape:constraints:max @shape:constraints:over-max
    Scenario Outline: A claim with <count> constraints
      When the user creates the ResourceClaim "two-gpus-same-numa" from the manifests with:
        | field                    | value           |
        | spec.devices.constraints | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                        |
        | 32    | accepted                                                                       |
        | 33    | rejected at "spec.devices.constraints" by rule "DRA-API/CONSTRAINT-ONE-OF"     |

  Rule: DRA-API/CONSTRAINT-FULLY-QUALIFIED  Constraint attributes carry their domain

    Scenario Outline: Matching on attribute <attribute>
      When the user creates the ResourceClaim "two-gpus-same-numa" from the manifests with:
        | field                                      | value         |
        | spec.devices.constraints[0].matchAttribute | "<attribute>" |
      Then the request is <outcome>

      Examples:
        | attribute            | outcome                                                                                                      |
        | gpu.example.com/numa | accepted                                                                                                     |
        | numa                 | rejected at "spec.devices.constraints[0].matchAttribute" by rule "DRA-API/CONSTRAINT-FULLY-QUALIFIED"        |

  Rule: DRA-API/REQUEST-REFERENCES-EXIST  Constraints and configuration name requests that exist, each once

    @shape:references:request @shape:references:subrequest @shape:references:duplicate
    Scenario Outline: A <user> naming <reference>
      When the user creates the ResourceClaim "gpu-and-nic" from the manifests with:
        | field                | value     |
        | spec.devices.<field> | [<entry>] |
      Then the request is <outcome>

      Examples:
        | user       | reference | field       | entry                                                                     | outcome                                                                                                         |
        | constraint | gpu, nic  | constraints | {requests: [gpu, nic], matchAttribute: example.com/pcieRoot}              | accepted                                                                                                        |
        | constraint | nic/fast  | constraints | {requests: [gpu, nic/fast], matchAttribute: example.com/pcieRoot}         | accepted                                                                                                        |
        | constraint | tpu       | constraints | {requests: [gpu, tpu], matchAttribute: example.com/pcieRoot}              | rejected at "spec.devices.constraints[0].requests[1]" by rule "DRA-API/REQUEST-REFERENCES-EXIST"                |
        | constraint | nic/huge  | constraints | {requests: [nic/huge], matchAttribute: example.com/pcieRoot}              | rejected at "spec.devices.constraints[0].requests[0]" by rule "DRA-API/REQUEST-REFERENCES-EXIST"                |
        | config     | gpu/fast  | config      | {requests: [gpu/fast], opaque: {driver: gpu.example.com, parameters: {}}} | rejected at "spec.devices.config[0].requests[0]" by rule "DRA-API/REQUEST-REFERENCES-EXIST"                     |
        | constraint | gpu twice | constraints | {requests: [gpu, gpu], matchAttribute: example.com/pcieRoot}              | rejected at "spec.devices.constraints[0].requests[1]" by rule "DRA-API/REQUEST-REFERENCES-EXIST" as a duplicate |
        | config     | gpu twice | config      | {requests: [gpu, gpu], opaque: {driver: gpu.example.com, parameters: {}}} | rejected at "spec.devices.config[0].requests[1]" by rule "DRA-API/REQUEST-REFERENCES-EXIST" as a duplicate      |

  Rule: DRA-API/CLAIM-SPEC-IMMUTABLE  A claim's spec and a template's spec never change

    Scenario Outline: Updating a claim to ask for <count> devices
      Given the ResourceClaim "one-gpu" from the manifests with:
        | field                                  | value |
        | spec.devices.requests[0].exactly.count | 1     |
      When the user updates the ResourceClaim "one-gpu" with:
        | field                                  | value   |
        | spec.devices.requests[0].exactly.count | <count> |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                           |
        | 1     | accepted                                                          |
        | 2     | rejected at "spec" by rule "DRA-API/CLAIM-SPEC-IMMUTABLE"         |

    Scenario Outline: Updating a template to ask for <count> devices
      Given the ResourceClaimTemplate "one-gpu" from the manifests
      When the user updates the ResourceClaimTemplate "one-gpu" with:
        | field                                       | value   |
        | spec.spec.devices.requests[0].exactly.count | <count> |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                           |
        | 1     | accepted                                                          |
        | 2     | rejected at "spec" by rule "DRA-API/CLAIM-SPEC-IMMUTABLE"         |

  Rule: DRA-API/ADMIN-ACCESS-NAMESPACE  Admin access only in a namespace labelled for it

    # kube-apiserver names the claim spec's path for a template too, and without `exactly`: the refusal is at
    # spec.devices.requests[0].adminAccess either way.
    Scenario Outline: A <kind> with adminAccess <value> in a namespace without the label
      When the user creates the <kind> "one-gpu" from the manifests with:
        | field                         | value   |
        | <request>.exactly.adminAccess | <value> |
      Then the request is <outcome>

      Examples:
        | kind                  | request                       | value | outcome                                                                                                |
        | ResourceClaim         | spec.devices.requests[0]      | true  | rejected at "spec.devices.requests[0].adminAccess" by rule "DRA-API/ADMIN-ACCESS-NAMESPACE"            |
        | ResourceClaimTemplate | spec.spec.devices.requests[0] | true  | rejected at "spec.devices.requests[0].adminAccess" by rule "DRA-API/ADMIN-ACCESS-NAMESPACE"            |
        | ResourceClaim         | spec.devices.requests[0]      | false | accepted                                                                                               |
        | ResourceClaimTemplate | spec.spec.devices.requests[0] | false | accepted                                                                                               |

    # With DRAAdminAccess off kube-apiserver drops adminAccess before it validates, so no namespace check is
    # left to refuse it (upstream's dropDisabledDRAAdminAccessFields, then validation). The gate is GA and locked
    # on from 1.36, so the API server is a 1.35 one, the last where it can be turned off.
    Scenario Outline: With DRAAdminAccess off in kube-apiserver, a <kind> asking for admin access loses the field
      Given kube-apiserver version "1.35" with feature gates "DRAAdminAccess=off"
      When the user creates the <kind> "one-gpu" from the manifests with:
        | field                         | value |
        | <request>.exactly.adminAccess | true  |
      Then the request is accepted
      And the stored <kind> "one-gpu" has no field "<request>.exactly.adminAccess"

      Examples:
        | kind                  | request                       |
        | ResourceClaim         | spec.devices.requests[0]      |
        | ResourceClaimTemplate | spec.spec.devices.requests[0] |

    Scenario Outline: A <kind> with admin access in a namespace labelled for it
      Given the namespace allows admin access
      When the user creates the <kind> "one-gpu" from the manifests with:
        | field                         | value |
        | <request>.exactly.adminAccess | true  |
      Then the request is accepted
      And the stored <kind> "one-gpu" has field "<request>.exactly.adminAccess" set to true

      Examples:
        | kind                  | request                       |
        | ResourceClaim         | spec.devices.requests[0]      |
        | ResourceClaimTemplate | spec.spec.devices.requests[0] |

    Scenario: An allocation granting admin access in a namespace without the label is refused
      Given the ResourceClaim "one-gpu" from the manifests
      When the user updates the status of ResourceClaim "one-gpu":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: worker-1, device: gpu-0, adminAccess: true}
        """
      Then the request is rejected at "status.allocation.devices.results[0].adminAccess" by rule "DRA-API/ADMIN-ACCESS-NAMESPACE"

    Scenario: An allocation granting admin access in a namespace labelled for it is accepted
      Given the namespace allows admin access
      And the ResourceClaim "one-gpu" from the manifests
      When the user updates the status of ResourceClaim "one-gpu":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: worker-1, device: gpu-0, adminAccess: true}
        """
      Then the request is accepted
