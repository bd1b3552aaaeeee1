@api-validation
Feature: A ResourceSlice describes one part of a pool, for one place (resource.k8s.io/v1 ResourceSlice)

  Rule: DRA-API/SLICE-DRIVER-NAME  The driver is a DNS subdomain of at most 63 characters

    Scenario Outline: A slice of driver "<driver>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field       | value    |
        | spec.driver | <driver> |
      Then the request is <outcome>

      Examples:
        | driver                                                            | outcome                                                          |
        | gpu.example.com                                                   | accepted                                                         |
        | a012345678901234567890123456789012345678901234567891.example.com | rejected at "spec.driver" by rule "DRA-API/SLICE-DRIVER-NAME"    |

      # Upstream lower-cases the name before it checks it (the rule's upstream_divergences).
      @upstream-differs:slice-driver-name-case
      Examples: upper case, which upstream accepts
        | driver          | outcome                                                       |
        | GPU.example.com | rejected at "spec.driver" by rule "DRA-API/SLICE-DRIVER-NAME" |

  Rule: DRA-API/SLICE-POOL  Pool names are DNS subdomains joined by '/'; generation >= 0; resourceSliceCount >= 1

    Scenario Outline: A pool "<pool>" at generation <generation> with <count> slices
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                        | value        |
        | spec.pool.name               | "<pool>"     |
        | spec.pool.generation         | <generation> |
        | spec.pool.resourceSliceCount | <count>      |
      Then the request is <outcome>

      Examples:
        | pool             | generation | count | outcome                                                                         |
        | rack-1/node-1    | 0          | 1     | accepted                                                                        |
        | rack-1/node-1    | (absent)   | 1     | accepted                                                                        |
        | rack-1//node-1   | 0          | 1     | rejected at "spec.pool.name" by rule "DRA-API/SLICE-POOL"                       |
        | node-1           | -1         | 1     | rejected at "spec.pool.generation" by rule "DRA-API/SLICE-POOL"                 |
        | node-1           | 0          | 0     | rejected at "spec.pool.resourceSliceCount" by rule "DRA-API/SLICE-POOL"         |

  Rule: DRA-API/SLICE-IDENTITY-IMMUTABLE  A slice keeps its driver, pool name and node

    Scenario Outline: Updating a slice to <change>
      Given the ResourceSlice "node-1-gpus" from the manifests
      When the user updates the ResourceSlice "node-1-gpus" with:
        | field                | value                          |
        | spec.driver          | <driver>                       |
        | spec.pool.name       | <pool>                         |
        | spec.pool.generation | <generation>                   |
        | spec.nodeName        | <node>                         |
        | spec.devices         | [{name: gpu-0}, {name: gpu-1}] |
      Then the request is <outcome>

      Examples:
        | change                          | driver            | pool   | generation | node   | outcome                                                                           |
        | add a device in a new generation | gpu.example.com   | node-1 | 2          | node-1 | accepted                                                                          |
        | name another driver             | fpga.example.com  | node-1 | 1          | node-1 | rejected at "spec.driver" by rule "DRA-API/SLICE-IDENTITY-IMMUTABLE"              |
        | move it to another pool         | gpu.example.com   | node-2 | 1          | node-1 | rejected at "spec.pool.name" by rule "DRA-API/SLICE-IDENTITY-IMMUTABLE"           |
        | move it to another node         | gpu.example.com   | node-1 | 1          | node-2 | rejected at "spec.nodeName" by rule "DRA-API/SLICE-IDENTITY-IMMUTABLE"            |

  Rule: DRA-API/SLICE-NODE-SELECTION-ONE-OF  Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection

    Scenario Outline: A slice for <where>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field         | value       |
        | spec.nodeName | <node>      |
        | spec.allNodes | <all nodes> |
      Then the request is <outcome>

      Examples:
        | where                       | node     | all nodes | outcome                                                                   |
        | one node                    | node-1   | (absent)  | accepted                                                                  |
        | every node                  | (absent) | true      | accepted                                                                  |
        | no node at all              | (absent) | (absent)  | rejected at "spec" by rule "DRA-API/SLICE-NODE-SELECTION-ONE-OF"          |
        | a node and every node       | node-1   | true      | rejected at "spec" by rule "DRA-API/SLICE-NODE-SELECTION-ONE-OF"          |
        | a node with an invalid name | Node_1   | (absent)  | rejected at "spec.nodeName" by rule "DRA-API/SLICE-NODE-SELECTION-ONE-OF" |

  Rule: DRA-API/SLICE-NODE-SELECTOR-ONE-TERM  A slice's nodeSelector has exactly one term

    Scenario Outline: A node selector with <terms> terms
      When the user creates the ResourceSlice "rack-1-gpus" from the manifests with:
        | field                               | value           |
        | spec.nodeSelector.nodeSelectorTerms | (<terms> items) |
      Then the request is <outcome>

      Examples:
        | terms | outcome                                                                                               |
        | 1     | accepted                                                                                              |
        | 2     | rejected at "spec.nodeSelector.nodeSelectorTerms" by rule "DRA-API/SLICE-NODE-SELECTOR-ONE-TERM"      |

  Rule: DRA-API/SLICE-NODE-SELECTION-TRUE-ONLY  allNodes and perDeviceNodeSelection are only ever true

    Scenario Outline: allNodes set to <value>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field         | value    |
        | spec.nodeName | (absent) |
        | spec.allNodes | <value>  |
      Then the request is <outcome>

      Examples:
        | value | outcome                                                                          |
        | true  | accepted                                                                         |
        | false | rejected at "spec.allNodes" by rule "DRA-API/SLICE-NODE-SELECTION-TRUE-ONLY"     |

  Rule: DRA-API/SLICE-DEVICE-NAMES-UNIQUE  Device names are unique within a slice

    Scenario Outline: Devices named <first> and <second>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field        | value                               |
        | spec.devices | [{name: <first>}, {name: <second>}] |
      Then the request is <outcome>

      Examples:
        | first | second | outcome                                                                                  |
        | gpu-0 | gpu-1  | accepted                                                                                 |
        | gpu-0 | gpu-0  | rejected at "spec.devices[1]" by rule "DRA-API/SLICE-DEVICE-NAMES-UNIQUE" as a duplicate |

  Rule: DRA-API/SLICE-MAX-DEVICES  At most 128 devices, 64 when any device has taints, consumes counters or has list attributes

    Scenario Outline: A slice of <count> plain devices
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field        | value           |
        | spec.devices | (<count> items) |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                  |
        | 128   | accepted                                                                 |
        | 129   | rejected at "spec.devices" by rule "DRA-API/SLICE-MAX-DEVICES"           |

    Scenario Outline: A slice of <count> tainted devices
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                                |
        | spec.devices[0].taints | [{key: example.com/maintenance, effect: NoSchedule}] |
        | spec.devices           | (<count> items)                                      |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                  |
        | 64    | accepted                                                                 |
        | 65    | rejected at "spec.devices" by rule "DRA-API/SLICE-MAX-DEVICES"           |

    Scenario Outline: A slice of <count> devices with a list-type attribute
      Given a cluster with feature gates "DRAListTypeAttributes" on
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value                                            |
        | spec.devices[0].attributes | {pcieRoots: {strings: [pci0000-00, pci0000-40]}} |
        | spec.devices               | (<count> items)                                  |
      Then the request is <outcome>

      Examples:
        | count | outcome                                                                  |
        | 64    | accepted                                                                 |
        | 65    | rejected at "spec.devices" by rule "DRA-API/SLICE-MAX-DEVICES"           |

  Rule: DRA-API/DEVICE-NAME  A device name is a DNS label

    Scenario Outline: A device named "<name>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                | value    |
        | spec.devices[0].name | "<name>" |
      Then the request is <outcome>

      Examples:
        | name      | outcome                                                                   |
        | gpu-0     | accepted                                                                  |
        | gpu.0     | rejected at "spec.devices[0].name" by rule "DRA-API/DEVICE-NAME"          |
        | GPU-0     | rejected at "spec.devices[0].name" by rule "DRA-API/DEVICE-NAME"          |

  Rule: DRA-API/DEVICE-QUALIFIED-NAMES  Attribute and capacity names are C identifiers, optionally with a domain

    Scenario Outline: An attribute named "<attribute>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                      | value                           |
        | spec.devices[0].attributes | {"<attribute>": {string: h100}} |
      Then the request is <outcome>

      Examples:
        | attribute                         | outcome                                                                                       |
        | model                             | accepted                                                                                      |
        | gpu.example.com/model             | accepted                                                                                      |
        | gpu-model                         | rejected at "spec.devices[0].attributes" by rule "DRA-API/DEVICE-QUALIFIED-NAMES"             |
        | a23456789012345678901234567890123 | rejected at "spec.devices[0].attributes" by rule "DRA-API/DEVICE-QUALIFIED-NAMES" as too long |

      # Upstream lets a name with more than one slash through (the rule's upstream_divergences).
      @upstream-differs:qualified-name-two-slashes
      Examples: two slashes, which upstream accepts
        | attribute                 | outcome                                                                           |
        | gpu.example.com/sub/model | rejected at "spec.devices[0].attributes" by rule "DRA-API/DEVICE-QUALIFIED-NAMES" |

  Rule: DRA-API/DEVICE-MAX-ATTRIBUTES-CAPACITIES  At most 32 attributes and capacities together

    Scenario Outline: A device with <attributes> attributes and one capacity
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                      | value                   |
        | spec.devices[0].capacity   | {memory: {value: 80Gi}} |
        | spec.devices[0].attributes | {a: {int: 1}}           |
        | spec.devices[0].attributes | (<attributes> items)    |
      Then the request is <outcome>

      Examples:
        | attributes | outcome                                                                                  |
        | 31         | accepted                                                                                 |
        | 32         | rejected at "spec.devices[0]" by rule "DRA-API/DEVICE-MAX-ATTRIBUTES-CAPACITIES"         |

  Rule: DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE  An attribute has exactly one typed value

    Scenario Outline: An attribute with <value>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                      | value           |
        | spec.devices[0].attributes | {numa: <value>} |
      Then the request is <outcome>

      Examples:
        | value                  | outcome                                                                                        |
        | {int: 0}               | accepted                                                                                       |
        | {}                     | rejected at "spec.devices[0].attributes[numa]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"    |
        | {int: 0, string: "0"}  | rejected at "spec.devices[0].attributes[numa]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"    |

    Scenario Outline: An attribute with <value> where list-type attributes are on
      Given a cluster with feature gates "DRAListTypeAttributes" on
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value           |
        | spec.devices[0].attributes | {numa: <value>} |
      Then the request is <outcome>

      Examples:
        | value                            | outcome                                                                                        |
        | {ints: [0, 1]}                   | accepted                                                                                       |
        | {int: 0, ints: [0]}              | rejected at "spec.devices[0].attributes[numa]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"    |
        | {strings: ["0"], versions: [1.0.0]} | rejected at "spec.devices[0].attributes[numa]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE" |

  Rule: DRA-API/DEVICE-ATTRIBUTE-VALUE-LENGTH  String and version values are at most 64 characters

    Scenario Outline: A <type> attribute of <length> characters
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                                    | value                                        |
        | spec.devices[0].attributes               | {value: {<type>: "<start>"}}                 |
        | spec.devices[0].attributes[value].<type> | (padded with "<pad>" to <length> characters) |
      Then the request is <outcome>

      Examples:
        | type    | start  | pad | length | outcome                                                                                                     |
        | string  | x      | x   | 64     | accepted                                                                                                    |
        | string  | x      | x   | 65     | rejected at "spec.devices[0].attributes[value].string" by rule "DRA-API/DEVICE-ATTRIBUTE-VALUE-LENGTH"      |
        | version | 1.0.0- | a   | 64     | accepted                                                                                                    |
        | version | 1.0.0- | a   | 65     | rejected at "spec.devices[0].attributes[value].version" by rule "DRA-API/DEVICE-ATTRIBUTE-VALUE-LENGTH"     |

  Rule: DRA-API/DEVICE-ATTRIBUTE-VERSION-SEMVER  Version attributes are semantic versions

    Scenario Outline: A driver version "<version>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                      | value                                   |
        | spec.devices[0].attributes | {driverVersion: {version: "<version>"}} |
      Then the request is <outcome>

      Examples:
        | version          | outcome                                                                                                         |
        | 1.2.3            | accepted                                                                                                        |
        | 2.0.0-rc.1+b.5   | accepted                                                                                                        |
        | 1.2              | rejected at "spec.devices[0].attributes[driverVersion].version" by rule "DRA-API/DEVICE-ATTRIBUTE-VERSION-SEMVER" |
        | v1.2.3           | rejected at "spec.devices[0].attributes[driverVersion].version" by rule "DRA-API/DEVICE-ATTRIBUTE-VERSION-SEMVER" |
        | 01.2.3           | rejected at "spec.devices[0].attributes[driverVersion].version" by rule "DRA-API/DEVICE-ATTRIBUTE-VERSION-SEMVER" |

  Rule: DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY  A list-type attribute has at least one item

    @shape:list:empty @shape:list:one @shape:list:several
    Scenario Outline: A <form> attribute holding <items>
      Given a cluster with feature gates "DRAListTypeAttributes" on
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value                       |
        | spec.devices[0].attributes | {values: {<form>: <items>}} |
      Then the request is <outcome>

      Examples:
        | form     | items          | outcome                                                                                                 |
        | ints     | [0]            | accepted                                                                                                |
        | bools    | [true, false]  | accepted                                                                                                |
        | strings  | [pci0000-00]   | accepted                                                                                                |
        | versions | [1.2.3]        | accepted                                                                                                |
        | ints     | []             | rejected at "spec.devices[0].attributes[values].ints" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY"     |
        | bools    | []             | rejected at "spec.devices[0].attributes[values].bools" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY"    |
        | strings  | []             | rejected at "spec.devices[0].attributes[values].strings" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY"  |
        | versions | []             | rejected at "spec.devices[0].attributes[values].versions" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY" |

  Rule: DRA-API/DEVICE-ATTRIBUTE-LIST-ITEMS  List items follow the single-value rules: at most 64 characters, versions semver

    Scenario Outline: A <form> list whose second item has <length> characters
      Given a cluster with feature gates "DRAListTypeAttributes" on
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                        | value                                        |
        | spec.devices[0].attributes                   | {values: {<form>: [<first>, "<start>"]}}     |
        | spec.devices[0].attributes[values].<form>[1] | (padded with "<pad>" to <length> characters) |
      Then the request is <outcome>

      Examples:
        | form     | first      | start  | pad | length | outcome                                                                                                 |
        | strings  | pci0000-00 | x      | x   | 64     | accepted                                                                                                |
        | strings  | pci0000-00 | x      | x   | 65     | rejected at "spec.devices[0].attributes[values].strings[1]" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-ITEMS"   |
        | versions | 1.2.3      | 1.0.0- | a   | 64     | accepted                                                                                                |
        | versions | 1.2.3      | 1.0.0- | a   | 65     | rejected at "spec.devices[0].attributes[values].versions[1]" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-ITEMS"  |

    Scenario Outline: Driver versions [1.2.3, "<version>"]
      Given a cluster with feature gates "DRAListTypeAttributes" on
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value                                              |
        | spec.devices[0].attributes | {driverVersions: {versions: [1.2.3, "<version>"]}} |
      Then the request is <outcome>

      Examples:
        | version        | outcome                                                                                                         |
        | 2.0.0-rc.1+b.5 | accepted                                                                                                        |
        | 1.2            | rejected at "spec.devices[0].attributes[driverVersions].versions[1]" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-ITEMS" |
        | v1.2.3         | rejected at "spec.devices[0].attributes[driverVersions].versions[1]" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-ITEMS" |

    # With the gate off kube-apiserver drops the list before it validates (upstream's
    # dropDisabledDRAListTypeAttributesFields), leaving an attribute without a value: refused for that, however
    # the items were written.
    Scenario Outline: With DRAListTypeAttributes off, a <form> list whose second item has <length> characters
      Given a cluster with feature gates "DRAListTypeAttributes" off
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                        | value                                        |
        | spec.devices[0].attributes                   | {values: {<form>: [<first>, "<start>"]}}     |
        | spec.devices[0].attributes[values].<form>[1] | (padded with "<pad>" to <length> characters) |
      Then the request is rejected at "spec.devices[0].attributes[values]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"

      Examples:
        | form     | first      | start  | pad | length |
        | strings  | pci0000-00 | x      | x   | 64     |
        | versions | 1.2.3      | 1.0.0- | a   | 65     |

  Rule: DRA-API/DEVICE-MAX-ATTRIBUTE-VALUES  At most 48 attribute values per device, each list item counting one

    Scenario Outline: A device with one string attribute and a list of <items> strings on Kubernetes <release>
      Given kube-apiserver version "<release>" with feature gates "DRAListTypeAttributes=on"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                         | value                                                       |
        | spec.devices[0].capacity                      | {cores: {value: "64"}}                                      |
        | spec.devices[0].attributes                    | {model: {string: epyc}, pcieRoots: {strings: [pci0000-00]}} |
        | spec.devices[0].attributes[pcieRoots].strings | (<items> items)                                             |
      Then the request is <outcome>

      Examples:
        | release | items | outcome                                                                     |
        | 1.36    | 47    | accepted                                                                    |
        | 1.36    | 48    | rejected at "spec.devices[0]" by rule "DRA-API/DEVICE-MAX-ATTRIBUTE-VALUES" |
        | current | 47    | accepted                                                                    |
        | current | 48    | rejected at "spec.devices[0]" by rule "DRA-API/DEVICE-MAX-ATTRIBUTE-VALUES" |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY  A requestPolicy needs allowMultipleAllocations

    Scenario Outline: A capacity with a request policy on a device shared <shared>
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                    | value    |
        | spec.devices[0].allowMultipleAllocations | <shared> |
      Then the request is <outcome>

      Examples:
        | shared | outcome                                                                                                   |
        | true   | accepted                                                                                                  |
        | false  | rejected at "spec.devices[0].capacity[memory].requestPolicy" by rule "DRA-API/CAPACITY-REQUEST-POLICY"    |

    # With the gate off kube-apiserver drops allowMultipleAllocations and every requestPolicy before it
    # validates (upstream's dropDisabledDRAConsumableCapacityFields): nothing is left to refuse.
    Scenario Outline: With DRAConsumableCapacity off in kube-apiserver, a request policy on a device shared <shared> is dropped
      Given kube-apiserver with feature gates "DRAConsumableCapacity=off"
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                    | value    |
        | spec.devices[0].allowMultipleAllocations | <shared> |
      Then the request is accepted
      And the stored ResourceSlice "node-1-shared-gpus" has no field "spec.devices[0].capacity[memory].requestPolicy"
      And the stored ResourceSlice "node-1-shared-gpus" has no field "spec.devices[0].allowMultipleAllocations"

      Examples:
        | shared |
        | true   |
        | false  |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF  One kind of request policy, and a default with it

    Scenario Outline: A shared capacity whose policy has <what>
      When the user creates the ResourceSlice "node-1-shared-nics" from the manifests with:
        | field                                            | value    |
        | spec.devices[0].capacity.bandwidth.requestPolicy | <policy> |
      Then the request is <outcome>

      Examples:
        | what                   | policy                                                           | outcome                                                                                                                 |
        | a range and a default  | {default: 1G, validRange: {min: 1G}}                             | accepted                                                                                                                |
        | only a default         | {default: 1G}                                                    | accepted                                                                                                                |
        | both kinds             | {default: 1G, validValues: [1G], validRange: {min: 1G}}          | rejected at "spec.devices[0].capacity[bandwidth].requestPolicy" by rule "DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF"         |
        | values but no default  | {validValues: [1G, 2G]}                                          | rejected at "spec.devices[0].capacity[bandwidth].requestPolicy.default" by rule "DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF" |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY-VALUES  Valid values sorted, unique, within the capacity, the default among them

    Scenario Outline: Valid values <values> with default <default>
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                                    | value       |
        | spec.devices[0].capacity.cores.requestPolicy.default     | "<default>" |
        | spec.devices[0].capacity.cores.requestPolicy.validValues | <values>    |
      Then the request is <outcome>

      Examples:
        | values             | default | outcome                                                                                                                                    |
        | ["10", "25", "50"] | 10      | accepted                                                                                                                                   |
        | ["10", "50", "25"] | 10      | rejected at "spec.devices[0].capacity[cores].requestPolicy.validValues[2]" by rule "DRA-API/CAPACITY-REQUEST-POLICY-VALUES"                |
        | ["10", "10", "50"] | 10      | rejected at "spec.devices[0].capacity[cores].requestPolicy.validValues[1]" by rule "DRA-API/CAPACITY-REQUEST-POLICY-VALUES" as a duplicate |
        | ["10", "100"]      | 10      | accepted                                                                                                                                   |
        | ["10", "101"]      | 10      | rejected at "spec.devices[0].capacity[cores].requestPolicy.validValues[1]" by rule "DRA-API/CAPACITY-REQUEST-POLICY-VALUES"                |
        | ["10", "25"]       | 20      | rejected at "spec.devices[0].capacity[cores].requestPolicy.validValues" by rule "DRA-API/CAPACITY-REQUEST-POLICY-VALUES"                   |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY-RANGE  A valid range lies within the capacity, its default and max on the step grid

    Scenario Outline: A range <range> with default <default> on 80Gi (Kubernetes <release>)
      Given kube-apiserver version "<release>" with feature gates "DRAConsumableCapacity=on"
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                                    | value     |
        | spec.devices[0].capacity.memory.requestPolicy.default    | <default> |
        | spec.devices[0].capacity.memory.requestPolicy.validRange | <range>   |
      Then the request is <outcome>

      # A default outside the range: at the bound it crosses until 1.36, at validRange.default from 1.37
      Examples:
        | release | range                              | default | outcome                                                                                                                         |
        | current | {min: 10Gi, max: 80Gi, step: 10Gi} | 20Gi    | accepted                                                                                                                        |
        | current | {min: 90Gi}                        | 90Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.min" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"     |
        | 1.37    | {min: 10Gi}                        | 5Gi     | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.default" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE" |
        | 1.36    | {min: 10Gi}                        | 5Gi     | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.min" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"     |
        | current | {min: 10Gi, max: 88Gi}             | 10Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.max" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"     |
        | 1.37    | {min: 10Gi, max: 20Gi}             | 30Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.default" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE" |
        | 1.36    | {min: 10Gi, max: 20Gi}             | 30Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.max" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"     |
        | current | {min: 10Gi, step: 10Gi}            | 15Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.step" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"    |
        | current | {min: 10Gi, max: 75Gi, step: 10Gi} | 10Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.step" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"    |
        | current | {min: 10Gi, step: 71Gi}            | 10Gi    | rejected at "spec.devices[0].capacity[memory].requestPolicy.validRange.step" by rule "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"    |
        | current | {min: 10Gi, step: 70Gi}            | 10Gi    | accepted                                                                                                                        |

  Rule: DRA-API/DEVICE-NODE-SELECTION  Per-device node selection only with perDeviceNodeSelection, then exactly one

    Scenario Outline: A device with <selection> in a slice <mode>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                       | value         |
        | spec.nodeName               | <slice node>  |
        | spec.perDeviceNodeSelection | <per device>  |
        | spec.devices[0].nodeName    | <device node> |
        | spec.devices[0].allNodes    | <all nodes>   |
      Then the request is <outcome>

      Examples:
        | selection   | mode                 | slice node | per device | device node | all nodes | outcome                                                               |
        | a node      | selecting per device | (absent)   | true       | node-1      | (absent)  | accepted                                                              |
        | no node     | selecting per device | (absent)   | true       | (absent)    | (absent)  | rejected at "spec.devices[0]" by rule "DRA-API/DEVICE-NODE-SELECTION" |
        | two choices | selecting per device | (absent)   | true       | node-1      | true      | rejected at "spec.devices[0]" by rule "DRA-API/DEVICE-NODE-SELECTION" |
        | a node      | for one node         | node-1     | (absent)   | node-2      | (absent)  | rejected at "spec.devices[0]" by rule "DRA-API/DEVICE-NODE-SELECTION" |

  Rule: DRA-API/DEVICE-MAX-TAINTS  At most 16 taints per device (4 in Kubernetes 1.34)

    @shape:taints:max @shape:taints:over-max
    Scenario Outline: A device with <taints> taints on Kubernetes <release>
      Given kube-apiserver version "<release>" with feature gates "DRADeviceTaints=on"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                      |
        | spec.devices[0].taints | [{key: example.com/t, effect: NoSchedule}] |
        | spec.devices[0].taints | (<taints> items)                           |
      Then the request is <outcome>

      Examples:
        | release | taints | outcome                                                                           |
        | 1.35    | 16     | accepted                                                                          |
        | 1.35    | 17     | rejected at "spec.devices[0].taints" by rule "DRA-API/DEVICE-MAX-TAINTS"          |
        | 1.34    | 4      | accepted                                                                          |
        | 1.34    | 5      | rejected at "spec.devices[0].taints" by rule "DRA-API/DEVICE-MAX-TAINTS"          |

  Rule: DRA-API/DEVICE-TAINT-FORMAT  A taint has a qualified key, a label value and a known effect

    Scenario Outline: A taint <key>=<value> with effect <effect>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                                  |
        | spec.devices[0].taints | [{key: "<key>", value: "<value>", effect: "<effect>"}] |
      Then the request is <outcome>

      Examples:
        | key                    | value     | effect     | outcome                                                                                   |
        | example.com/ecc-errors | many      | NoSchedule | accepted                                                                                  |
        | example.com/ecc-errors | many      | None       | accepted                                                                                  |
        | ecc errors             | many      | NoSchedule | rejected at "spec.devices[0].taints[0].key" by rule "DRA-API/DEVICE-TAINT-FORMAT"         |
        | example.com/ecc-errors | too many! | NoSchedule | rejected at "spec.devices[0].taints[0].value" by rule "DRA-API/DEVICE-TAINT-FORMAT"       |
        | example.com/ecc-errors | many      | Evict      | rejected at "spec.devices[0].taints[0].effect" by rule "DRA-API/DEVICE-TAINT-FORMAT"      |

  Rule: DRA-API/DEVICE-TAINT-TIME-ADDED  The API server stamps a taint written without timeAdded

    Scenario: A driver's taint without timeAdded is stored with one
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                                        |
        | spec.devices[0].taints | [{key: example.com/ecc-errors, effect: NoSchedule}]          |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has field "spec.devices[0].taints[0].timeAdded"

    Scenario: A driver's taint with timeAdded keeps the time it was given
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                                                             |
        | spec.devices[0].taints | [{key: example.com/ecc-errors, effect: NoSchedule, timeAdded: "2026-01-02T03:04:05Z"}] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has field "spec.devices[0].taints[0].timeAdded" set to "2026-01-02T03:04:05Z"
