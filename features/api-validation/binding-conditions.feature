@api-validation @kep-5007
Feature: Devices declare binding conditions the scheduler waits for (KEP-5007 Device Enhancements)

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on

  Rule: DRA-API/BINDING-CONDITIONS-MAX  At most 4 binding conditions and 4 binding failure conditions

    @shape:conditions:max @shape:conditions:over-max
    Scenario Outline: A fabric device with <count> <list>
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                  | value           |
        | spec.devices[0].<list> | (<count> items) |
      Then the request is <outcome>

      Examples:
        | list                     | count | outcome                                                                                          |
        | bindingConditions        | 4     | accepted                                                                                         |
        | bindingConditions        | 5     | rejected at "spec.devices[0].bindingConditions" by rule "DRA-API/BINDING-CONDITIONS-MAX"         |
        | bindingFailureConditions | 4     | accepted                                                                                         |
        | bindingFailureConditions | 5     | rejected at "spec.devices[0].bindingFailureConditions" by rule "DRA-API/BINDING-CONDITIONS-MAX"  |

  Rule: DRA-API/BINDING-CONDITIONS-FORMAT  Every entry is a condition type: a qualified name

    Scenario Outline: A binding condition "<condition>"
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                | value         |
        | spec.devices[0].bindingConditions[0] | "<condition>" |
      Then the request is <outcome>

      Examples:
        | condition                   | outcome                                                                                            |
        | gpu.example.com/attached    | accepted                                                                                           |
        | FabricDeviceReady           | accepted                                                                                           |
        | gpu.example.com/is attached | rejected at "spec.devices[0].bindingConditions[0]" by rule "DRA-API/BINDING-CONDITIONS-FORMAT"     |
        | a/b/attached                | rejected at "spec.devices[0].bindingConditions[0]" by rule "DRA-API/BINDING-CONDITIONS-FORMAT"     |

  Rule: DRA-API/BINDING-CONDITIONS-UNIQUE  No list repeats a condition

    Scenario Outline: Binding conditions <conditions>
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                             | value        |
        | spec.devices[0].bindingConditions | <conditions> |
      Then the request is <outcome>

      Examples:
        | conditions                                           | outcome                                                                                                       |
        | [gpu.example.com/attached, gpu.example.com/ready]    | accepted                                                                                                      |
        | [gpu.example.com/attached, gpu.example.com/attached] | rejected at "spec.devices[0].bindingConditions[1]" by rule "DRA-API/BINDING-CONDITIONS-UNIQUE" as a duplicate |

    # The rule holds for both lists: an API server that checks only bindingConditions passes the outline above.
    Scenario Outline: Binding failure conditions <failures>
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                    | value      |
        | spec.devices[0].bindingFailureConditions | <failures> |
      Then the request is <outcome>

      Examples:
        | failures                                                       | outcome                                                                                                              |
        | [gpu.example.com/attach-failed, gpu.example.com/lost]          | accepted                                                                                                             |
        | [gpu.example.com/attach-failed, gpu.example.com/attach-failed] | rejected at "spec.devices[0].bindingFailureConditions[1]" by rule "DRA-API/BINDING-CONDITIONS-UNIQUE" as a duplicate |

  Rule: DRA-API/BINDING-CONDITIONS-DISJOINT  No condition is both a binding and a binding failure condition

    Scenario Outline: Failure conditions <failures> next to binding condition gpu.example.com/attached
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                    | value      |
        | spec.devices[0].bindingFailureConditions | <failures> |
      Then the request is <outcome>

      Examples:
        | failures                                               | outcome                                                                                                   |
        | [gpu.example.com/attach-failed]                        | accepted                                                                                                  |
        | [gpu.example.com/attach-failed, gpu.example.com/attached] | rejected at "spec.devices[0].bindingFailureConditions[1]" by rule "DRA-API/BINDING-CONDITIONS-DISJOINT" |

  Rule: DRA-API/BINDING-CONDITIONS-TOGETHER  Binding and binding failure conditions come together or not at all

    Scenario Outline: A device with <declared>
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                    | value        |
        | spec.devices[0].bindingConditions        | <conditions> |
        | spec.devices[0].bindingFailureConditions | <failures>   |
      Then the request is <outcome>

      Examples:
        | declared                | conditions                 | failures                 | outcome                                                                                              |
        | both lists              | [gpu.example.com/attached] | [gpu.example.com/failed] | accepted                                                                                             |
        | neither list            | (absent)                   | (absent)                 | accepted                                                                                             |
        | only binding conditions | [gpu.example.com/attached] | (absent)                 | rejected at "spec.devices[0].bindingFailureConditions" by rule "DRA-API/BINDING-CONDITIONS-TOGETHER" |
        | only failure conditions | (absent)                   | [gpu.example.com/failed] | rejected at "spec.devices[0].bindingConditions" by rule "DRA-API/BINDING-CONDITIONS-TOGETHER"        |
