@api-validation
Feature: Shared counters and counter consumption of partitionable devices (KEP-4815 API, KEP-5963 compatibilityGroups)

  Rule: DRA-API/SLICE-DEVICES-OR-COUNTERS  From Kubernetes 1.35 a slice holds devices or counter sets, not both

    Scenario Outline: One slice with a device and a counter set on Kubernetes <release>
      Given kube-apiserver version "<release>" with feature gates "DRAPartitionableDevices=on"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field               | value                                                       |
        | spec.sharedCounters | [{name: gpu-0-counters, counters: {memory: {value: 80Gi}}}] |
      Then the request is <outcome>

      Examples:
        | release | outcome                                                                   |
        | 1.34    | accepted                                                                  |
        | 1.35    | rejected at "spec" by rule "DRA-API/SLICE-DEVICES-OR-COUNTERS"            |
        | 1.37    | rejected at "spec" by rule "DRA-API/SLICE-DEVICES-OR-COUNTERS"            |

  Rule: DRA-API/SLICE-MAX-COUNTER-SETS  At most 8 counter sets per slice (1.34: at most 32 counters in all sets)

    @shape:counter-sets:max @shape:counter-sets:over-max
    Scenario Outline: A slice with <sets> counter sets of <counters> counters on Kubernetes <release>
      Given kube-apiserver version "<release>" with feature gates "DRAPartitionableDevices=on"
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                           | value          |
        | spec.sharedCounters[0].counters | <counters>     |
        | spec.sharedCounters             | (<sets> items) |
      Then the request is <outcome>

      Examples:
        | release | sets | counters                                                     | outcome                                                                        |
        | 1.37    | 8    | {memory: {value: 80Gi}}                                      | accepted                                                                       |
        | 1.37    | 9    | {memory: {value: 80Gi}}                                      | rejected at "spec.sharedCounters" by rule "DRA-API/SLICE-MAX-COUNTER-SETS"     |
        | 1.34    | 16   | {memory: {value: 80Gi}, sm: {value: "132"}}                  | accepted                                                                       |
        | 1.34    | 11   | {memory: {value: 80Gi}, sm: {value: "132"}, ce: {value: "7"}} | rejected at "spec.sharedCounters" by rule "DRA-API/SLICE-MAX-COUNTER-SETS"    |

  Rule: DRA-API/COUNTER-SET-NAMES  Counter set names are DNS labels, unique in the slice

    Scenario Outline: Counter sets named <first> and <second>
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                       | value      |
        | spec.sharedCounters[0].name | "<first>"  |
        | spec.sharedCounters         | (2 items)  |
        | spec.sharedCounters[1].name | "<second>" |
      Then the request is <outcome>

      Examples:
        | first | second | outcome                                                                                 |
        | gpu-0 | gpu-1  | accepted                                                                                |
        | gpu-0 | gpu-0  | rejected at "spec.sharedCounters[1]" by rule "DRA-API/COUNTER-SET-NAMES" as a duplicate |
        | gpu-0 | gpu.1  | rejected at "spec.sharedCounters[1].name" by rule "DRA-API/COUNTER-SET-NAMES"           |

    # With the gate off kube-apiserver drops sharedCounters before it validates (upstream's
    # dropDisabledDRAPartitionableDevicesFields); the slice is left with its node and no devices, which is valid.
    Scenario Outline: With DRAPartitionableDevices off in kube-apiserver, counter sets named <first> and <second> are dropped
      Given kube-apiserver with feature gates "DRAPartitionableDevices=off"
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                       | value      |
        | spec.sharedCounters[0].name | "<first>"  |
        | spec.sharedCounters         | (2 items)  |
        | spec.sharedCounters[1].name | "<second>" |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpu-counters" has no field "spec.sharedCounters"

      Examples:
        | first | second |
        | gpu-0 | gpu-1  |
        | gpu-0 | gpu-0  |

  Rule: DRA-API/COUNTER-SET-COUNTERS  A counter set has 1 to 32 counters with DNS-label names and quantity values

    @shape:counters:max @shape:counters:over-max
    Scenario Outline: A counter set with <counters> counters
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                           | value              |
        | spec.sharedCounters[0].counters | (<counters> items) |
      Then the request is <outcome>

      Examples:
        | counters | outcome                                                                                 |
        | 32       | accepted                                                                                |
        | 33       | rejected at "spec.sharedCounters[0].counters" by rule "DRA-API/COUNTER-SET-COUNTERS"    |

    # Shapes walk (issue 39): a counter set must have a counter; an empty map is refused, not read as unset.
    @shape:counters:empty
    Scenario: A counter set with no counters
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                           | value |
        | spec.sharedCounters[0].counters | {}    |
      Then the request is rejected at "spec.sharedCounters[0].counters" by rule "DRA-API/COUNTER-SET-COUNTERS"

    @shape:counters:one
    Scenario Outline: A counter <name> of <value>
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                           | value                          |
        | spec.sharedCounters[0].counters | {"<name>": {value: "<value>"}} |
      Then the request is <outcome>

      Examples:
        | name   | value | outcome                                                                                            |
        | memory | 80Gi  | accepted                                                                                           |
        | memory | lots  | rejected at "spec.sharedCounters[0].counters[memory].value" by rule "DRA-API/COUNTER-SET-COUNTERS" |
        | Memory | 80Gi  | rejected at "spec.sharedCounters[0].counters" by rule "DRA-API/COUNTER-SET-COUNTERS"               |

  Rule: DRA-API/DEVICE-COUNTER-CONSUMPTIONS  A device consumes from at most 2 counter sets, each once

    @shape:counter-sets:max @shape:counter-sets:over-max
    Scenario Outline: A device consuming from <sets> counter sets
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                            | value          |
        | spec.devices[0].consumesCounters | (<sets> items) |
      Then the request is <outcome>

      Examples:
        | sets | outcome                                                                                    |
        | 2    | accepted                                                                                   |
        | 3    | rejected at "spec.devices[0].consumesCounters" by rule "DRA-API/DEVICE-COUNTER-CONSUMPTIONS" |

    @shape:counter-sets:duplicate
    Scenario Outline: A device consuming from <first> and <second>
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                          | value     |
        | spec.devices[0].consumesCounters[0].counterSet | <first>   |
        | spec.devices[0].consumesCounters               | (2 items) |
        | spec.devices[0].consumesCounters[1].counterSet | <second>  |
      Then the request is <outcome>

      Examples:
        | first | second | outcome                                                                                                        |
        | gpu-0 | gpu-1  | accepted                                                                                                       |
        | gpu-0 | gpu-0  | rejected at "spec.devices[0].consumesCounters[1]" by rule "DRA-API/DEVICE-COUNTER-CONSUMPTIONS" as a duplicate |

  Rule: DRA-API/DEVICE-CONSUMED-COUNTERS  A consumption names 1 to 32 counters (1.34: at most 32 per device)

    @shape:counters:max @shape:counters:over-max
    Scenario Outline: A device consuming <counters> counters of one set on Kubernetes <release>
      Given kube-apiserver version "<release>" with feature gates "DRAPartitionableDevices=on"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                        | value              |
        | spec.devices[0].consumesCounters[0].counters | (<counters> items) |
      Then the request is <outcome>

      Examples:
        | release | counters | outcome                                                                                                  |
        | 1.37    | 32       | accepted                                                                                                 |
        | 1.37    | 33       | rejected at "spec.devices[0].consumesCounters[0].counters" by rule "DRA-API/DEVICE-CONSUMED-COUNTERS"    |
        | 1.34    | 32       | accepted                                                                                                 |

    # Shapes walk (issue 39): a consumption must name a counter; an empty map is refused, not read as unset.
    @shape:counters:empty
    Scenario: A device consuming no counter of a set
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                        | value |
        | spec.devices[0].consumesCounters[0].counters | {}    |
      Then the request is rejected at "spec.devices[0].consumesCounters[0].counters" by rule "DRA-API/DEVICE-CONSUMED-COUNTERS"

    Scenario Outline: A device consuming from two sets with <counters> counters each on Kubernetes 1.34
      Given kube-apiserver version "1.34" with feature gates "DRAPartitionableDevices=on"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                        | value                              |
        | spec.devices[0].consumesCounters[0].counters | {a: {value: "1"}, b: {value: "1"}} |
        | spec.devices[0].consumesCounters             | (2 items)                          |
        | spec.devices[0].consumesCounters[1].counters | {c: {value: "1"}}                  |
        | spec.devices[0].consumesCounters[1].counters | (<counters> items)                 |
      Then the request is <outcome>

      Examples:
        | counters | outcome                                                                                      |
        | 30       | accepted                                                                                     |
        | 31       | rejected at "spec.devices[0].consumesCounters" by rule "DRA-API/DEVICE-CONSUMED-COUNTERS"    |

  Rule: DRA-API/COMPATIBILITY-GROUPS  At most 2 compatibility groups per consumption, DNS labels, no duplicates

    @shape:groups:empty @shape:groups:one @shape:groups:max @shape:groups:over-max @shape:groups:duplicate
    Scenario Outline: A MIG partition in compatibility groups <groups>
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                                   | value    |
        | spec.devices[0].consumesCounters[0].compatibilityGroups | <groups> |
      Then the request is <outcome>

      Examples:
        | groups         | outcome                                                                                                                        |
        | [mig]          | accepted                                                                                                                       |
        | [mig, vgpu]    | accepted                                                                                                                       |
        | []             | accepted                                                                                                                       |
        | [mig, vgpu, a] | rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups" by rule "DRA-API/COMPATIBILITY-GROUPS"                   |
        | [mig, mig]     | rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[1]" by rule "DRA-API/COMPATIBILITY-GROUPS" as a duplicate |
        | [MIG]          | rejected at "spec.devices[0].consumesCounters[0].compatibilityGroups[0]" by rule "DRA-API/COMPATIBILITY-GROUPS"                |

  Rule: DRA-API/PARTITION-TYPE-ATTRIBUTE-NAME  partitionTypeAttribute is a fully qualified attribute name

    Scenario Outline: Partition types named by "<name>"
      Given a cluster with feature gates "DRAPartitionableDevicesType" on
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                       | value    |
        | spec.partitionTypeAttribute | "<name>" |
      Then the request is <outcome>

      Examples:
        | name                          | outcome                                                                                        |
        | gpu.example.com/profile       | accepted                                                                                       |
        | profile                       | rejected at "spec.partitionTypeAttribute" by rule "DRA-API/PARTITION-TYPE-ATTRIBUTE-NAME"      |
        | gpu.example.com/mig/profile   | rejected at "spec.partitionTypeAttribute" by rule "DRA-API/PARTITION-TYPE-ATTRIBUTE-NAME"      |

    Scenario Outline: With DRAPartitionableDevicesType off, partition types named by "<name>" are dropped
      Given a cluster with feature gates "DRAPartitionableDevicesType" off
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                       | value    |
        | spec.partitionTypeAttribute | "<name>" |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.partitionTypeAttribute"

      Examples:
        | name                    |
        | gpu.example.com/profile |
        | profile                 |

  Rule: DRA-API/PARTITION-TYPE-ATTRIBUTE-NEEDS-COUNTERS  Only a slice with devices that consume counters names a partition type

    Scenario Outline: A slice naming a partition type whose device <consumes>
      Given a cluster with feature gates "DRAPartitionableDevicesType" on
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                            | value                   |
        | spec.partitionTypeAttribute      | gpu.example.com/profile |
        | spec.devices[0].consumesCounters | <consumption>           |
      Then the request is <outcome>

      Examples:
        | consumes             | consumption                                                    | outcome                                                                                            |
        | consumes counters    | [{counterSet: gpu-0-counters, counters: {memory: {value: 10Gi}}}] | accepted                                                                                        |
        | consumes no counters | (absent)                                                       | rejected at "spec.partitionTypeAttribute" by rule "DRA-API/PARTITION-TYPE-ATTRIBUTE-NEEDS-COUNTERS" |

  Rule: DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES  Every device consuming counters has the partition type as a string attribute

    Scenario Outline: A partition with attribute <attribute>
      Given a cluster with feature gates "DRAPartitionableDevicesType" on
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                       | value                   |
        | spec.partitionTypeAttribute | gpu.example.com/profile |
        | spec.devices[0].attributes  | {<attribute>: <value>}  |
      Then the request is <outcome>

      Examples:
        | attribute               | value             | outcome                                                                                                                 |
        | gpu.example.com/profile | {string: 1g.10gb} | accepted                                                                                                                |
        | profile                 | {string: 1g.10gb} | accepted                                                                                                                |
        | gpu.example.com/profile | {int: 1}          | rejected at "spec.devices[0].attributes[gpu.example.com/profile]" by rule "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES" |
        | profile                 | {version: 1.0.0}  | rejected at "spec.devices[0].attributes[gpu.example.com/profile]" by rule "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES" |
        | nic.example.com/profile | {string: 1g.10gb} | rejected at "spec.devices[0].attributes[gpu.example.com/profile]" by rule "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES" |
