@api-validation
Feature: Device classes and selectors (resource.k8s.io/v1 DeviceClass, CELDeviceSelector, opaque configuration)

  Rule: DRA-API/SELECTORS-MAX  At most 32 selectors in a class, a request or a subrequest

    @shape:selectors:max @shape:selectors:over-max
    Scenario Outline: A class with <count> selectors
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field          | value           |
        | spec.selectors | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                |
        | 32    | accepted                                                               |
        | 33    | rejected at "spec.selectors" by rule "DRA-API/SELECTORS-MAX"           |

    @shape:selectors:max @shape:selectors:over-max
    Scenario Outline: A request with <count> selectors
      When the user creates the ResourceClaim "one-h100" from the manifests with:
        | field                                      | value           |
        | spec.devices.requests[0].exactly.selectors | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                                        |
        | 32    | accepted                                                                                       |
        | 33    | rejected at "spec.devices.requests[0].exactly.selectors" by rule "DRA-API/SELECTORS-MAX"       |

  Rule: DRA-API/CEL-COMPILES  A selector compiles in the DRA CEL environment and yields a bool

    Scenario Outline: A class selecting <what>
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field                            | value          |
        | spec.selectors[0].cel.expression | '<expression>' |
      Then the request is <outcome>

      Examples:
        | what                        | expression                                                                    | outcome                                                                       |
        | by driver                   | device.driver == "gpu.example.com"                                            | accepted                                                                      |
        | by memory                   | device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi"))     | accepted                                                                      |
        | by driver version           | device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("2.0.0")) | accepted                                                                     |
        | with a syntax error         | device.driver ==                                                              | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | through an unknown variable | gpu.driver == "gpu.example.com"                                               | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | with a number, not a bool   | 1 + 1                                                                         | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | by a name, not a bool       | device.driver                                                                 | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | memory equal to a string    | device.capacity["gpu.example.com"].memory == "80Gi"                           | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | memory above a number       | device.capacity["gpu.example.com"].memory > 10                                | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | through a misspelt field    | device.drivr == "gpu.example.com"                                             | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COMPILES" |
        | by an attribute of any type | device.attributes["gpu.example.com"].cores > 8                                | accepted                                                                      |

  Rule: DRA-API/CEL-COST  A selector whose estimated worst-case cost exceeds 1,000,000 is too complex

    Scenario Outline: A class selecting with <what>
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field                            | value          |
        | spec.selectors[0].cel.expression | '<expression>' |
      Then the request is <outcome>

      Examples:
        | what                                    | expression                                                                                                                                             | outcome                                                                    |
        | two nested loops over attributes        | device.attributes.all(d, device.attributes[d].all(n, n.size() < 40))                                                                                   | accepted                                                                   |
        | three nested loops over attributes      | device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, a != c)))                                                                   | accepted                                                                   |
        | four nested loops over attributes       | device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, a != d))))                                         | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COST" |
        | string work in three nested loops       | device.attributes.all(a, device.attributes[a].all(b, device.attributes.all(c, device.attributes[c].exists(d, (a + b + c + d).contains("x")))))          | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-COST" |

  Rule: DRA-API/DERIVED-ATTRIBUTES  A request derives at most 32 attributes, each a name and a CEL expression

    Scenario: A request deriving 33 attributes
      Given a cluster with feature gates "DRADerivedAttributes" on
      When the user creates the ResourceClaim "one-h100" from the manifests with:
        | field                                              | value                                                        |
        | spec.devices.requests[0].exactly.derivedAttributes | [{name: numa, expression: 'device.attributes["gpu.example.com"].numa'}] |
        | spec.devices.requests[0].exactly.derivedAttributes | (33 items)                                                   |
      Then the request is rejected at "spec.devices.requests[0].exactly.derivedAttributes" by rule "DRA-API/DERIVED-ATTRIBUTES"

    Scenario: A derived attribute without its expression
      Given a cluster with feature gates "DRADerivedAttributes" on
      When the user creates the ResourceClaim "one-h100" from the manifests with:
        | field                                              | value          |
        | spec.devices.requests[0].exactly.derivedAttributes | [{name: numa}] |
      Then the request is rejected at "spec.devices.requests[0].exactly.derivedAttributes[0].expression" by rule "DRA-API/DERIVED-ATTRIBUTES"

    Scenario: A derived attribute whose expression names a field the device does not have
      Given a cluster with feature gates "DRADerivedAttributes" on
      When the user creates the ResourceClaim "one-h100" from the manifests with:
        | field                                              | value                                              |
        | spec.devices.requests[0].exactly.derivedAttributes | [{name: numa, expression: 'device.numa'}]          |
      Then the request is rejected at "spec.devices.requests[0].exactly.derivedAttributes[0].expression" by rule "DRA-API/DERIVED-ATTRIBUTES"

    # With the gate off (its default) kube-apiserver drops derivedAttributes before it validates.
    Scenario Outline: With DRADerivedAttributes off, a request deriving <count> attributes loses them
      Given a cluster with feature gates "DRADerivedAttributes" off
      When the user creates the ResourceClaim "one-h100" from the manifests with:
        | field                                              | value                                                                    |
        | spec.devices.requests[0].exactly.derivedAttributes | [{name: numa, expression: 'device.attributes["gpu.example.com"].numa'}] |
        | spec.devices.requests[0].exactly.derivedAttributes | (<count> items)                                                          |
      Then the request is accepted
      And the stored ResourceClaim "one-h100" has no field "spec.devices.requests[0].exactly.derivedAttributes"

      Examples:
        | count |
        | 1     |
        | 33    |

  Rule: DRA-API/CEL-MAX-LENGTH  A selector expression is at most 10 KiB

    Scenario Outline: An expression of <length> characters
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field                            | value                                    |
        | spec.selectors[0].cel.expression | (padded with " " to <length> characters) |
      Then the request is <outcome>

      Examples:
        | length | outcome                                                                          |
        | 10240  | accepted                                                                         |
        | 10241  | rejected at "spec.selectors[0].cel.expression" by rule "DRA-API/CEL-MAX-LENGTH"  |

  Rule: DRA-API/CONFIG-MAX  At most 32 configuration entries in a class or a claim

    @shape:config:max @shape:config:over-max
    Scenario Outline: A class with <count> configuration entries
      When the user creates the DeviceClass "time-sliced.gpu.example.com" from the manifests with:
        | field       | value           |
        | spec.config | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                      |
        | 32    | accepted                                                     |
        | 33    | rejected at "spec.config" by rule "DRA-API/CONFIG-MAX"       |

  Rule: DRA-API/CONFIG-OPAQUE  Opaque configuration names a driver and carries a JSON object of at most 10 KiB

    Scenario Outline: Opaque parameters <parameters> for driver <driver>
      When the user creates the DeviceClass "time-sliced.gpu.example.com" from the manifests with:
        | field                            | value        |
        | spec.config[0].opaque.driver     | "<driver>"   |
        | spec.config[0].opaque.parameters | <parameters> |
      Then the request is <outcome>

      Examples:
        | driver          | parameters             | outcome                                                                                 |
        | gpu.example.com | {sharing: TimeSlicing} | accepted                                                                                |
        | gpu.example.com | [TimeSlicing]          | rejected at "spec.config[0].opaque.parameters" by rule "DRA-API/CONFIG-OPAQUE"          |

      # Upstream lower-cases the driver name before it checks it (the rule's upstream_divergences).
      @upstream-differs:opaque-driver-name-case
      Examples: an upper-case driver, which upstream accepts
        | driver | parameters             | outcome                                                                    |
        | GPU    | {sharing: TimeSlicing} | rejected at "spec.config[0].opaque.driver" by rule "DRA-API/CONFIG-OPAQUE" |

    Scenario Outline: Opaque parameters of <length> characters of text
      When the user creates the DeviceClass "time-sliced.gpu.example.com" from the manifests with:
        | field                                 | value                                    |
        | spec.config[0].opaque.parameters      | {blob: ""}                               |
        | spec.config[0].opaque.parameters.blob | (padded with "x" to <length> characters) |
      Then the request is <outcome>

      Examples:
        | length | outcome                                                                          |
        | 10229  | accepted                                                                         |
        | 10230  | rejected at "spec.config[0].opaque.parameters" by rule "DRA-API/CONFIG-OPAQUE"   |

  Rule: DRA-API/CLASS-EXTENDED-RESOURCE-NAME  A class's extendedResourceName is an extended resource name

    Scenario Outline: A class standing for <name>
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field                     | value  |
        | spec.extendedResourceName | <name> |
      Then the request is <outcome>

      Examples:
        | name                      | outcome                                                                                         |
        | example.com/gpu           | accepted                                                                                        |
        | gpu                       | rejected at "spec.extendedResourceName" by rule "DRA-API/CLASS-EXTENDED-RESOURCE-NAME"          |
        | kubernetes.io/gpu         | rejected at "spec.extendedResourceName" by rule "DRA-API/CLASS-EXTENDED-RESOURCE-NAME"          |
        | nvidia.kubernetes.io/gpu  | rejected at "spec.extendedResourceName" by rule "DRA-API/CLASS-EXTENDED-RESOURCE-NAME"          |
        | requests.example.com/gpu  | rejected at "spec.extendedResourceName" by rule "DRA-API/CLASS-EXTENDED-RESOURCE-NAME"          |

    # With the gate off kube-apiserver drops extendedResourceName before it validates (upstream's
    # dropDisabledDRAExtendedResourceFields in the DeviceClass strategy).
    Scenario Outline: With DRAExtendedResource off in kube-apiserver, a class standing for <name> loses the field
      Given kube-apiserver with feature gates "DRAExtendedResource=off"
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field                     | value  |
        | spec.extendedResourceName | <name> |
      Then the request is accepted
      And the stored DeviceClass "gpu.example.com" has no field "spec.extendedResourceName"

      Examples:
        | name            |
        | example.com/gpu |
        | gpu             |
