@api-validation
Feature: Each gated validation rule with its gate off: a field the gate guards is dropped on create, and kept and judged on update once stored (issue 39)

  # kube-apiserver drops a gated field in PrepareForCreate, before Validate runs, and on update only when the
  # stored object does not use the feature yet (v1.36.2's pkg/registry/resource/*/strategy.go and
  # pkg/api/resourceclaimspec/util.go). So with the gate off a value a rule refuses is not refused on create:
  # the field is gone. Rows at the release before the gate's default turned on run with the release defaults.

  Rule: DRA-API/BINDING-CONDITIONS-MAX  At most 4 binding conditions and 4 binding failure conditions

    Scenario Outline: With <gates> at Kubernetes <release>, five binding conditions are dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                             | value     |
        | spec.devices[0].bindingConditions | (5 items) |
      Then the request is accepted
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindingConditions"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/BINDING-CONDITIONS-FORMAT  Every entry is a condition type: a qualified name

    Scenario Outline: With <gates> at Kubernetes <release>, a malformed binding condition is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                | value          |
        | spec.devices[0].bindingConditions[0] | "a/b/attached" |
      Then the request is accepted
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindingConditions"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/BINDING-CONDITIONS-UNIQUE  No list repeats a condition

    Scenario Outline: With <gates> at Kubernetes <release>, a repeated binding failure condition is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                    | value                                                          |
        | spec.devices[0].bindingFailureConditions | [gpu.example.com/attach-failed, gpu.example.com/attach-failed] |
      Then the request is accepted
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindingFailureConditions"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/BINDING-CONDITIONS-DISJOINT  No condition is both a binding and a binding failure condition

    Scenario Outline: With <gates> at Kubernetes <release>, a condition in both lists is dropped with them, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                    | value                                                     |
        | spec.devices[0].bindingFailureConditions | [gpu.example.com/attach-failed, gpu.example.com/attached] |
      Then the request is accepted
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindingConditions"
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindingFailureConditions"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/BINDING-CONDITIONS-TOGETHER  Binding and binding failure conditions come together or not at all

    # All three fields go together: an API server dropping only some of them would leave one list alone.
    Scenario Outline: With <gates> at Kubernetes <release>, binding conditions without failure conditions are dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "fabric-gpus" from the manifests with:
        | field                                    | value    |
        | spec.devices[0].bindingFailureConditions | (absent) |
      Then the request is accepted
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindingConditions"
      And the stored ResourceSlice "fabric-gpus" has no field "spec.devices[0].bindsToNode"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off                                   |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.35    | defaults                                                         |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF  One kind of request policy, and a default with it

    Scenario Outline: With <gates> at Kubernetes <release>, a policy of both kinds is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-shared-nics" from the manifests with:
        | field                                            | value                                                   |
        | spec.devices[0].capacity.bandwidth.requestPolicy | {default: 1G, validValues: [1G], validRange: {min: 1G}} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-shared-nics" has no field "spec.devices[0].capacity[bandwidth].requestPolicy"
      And the stored ResourceSlice "node-1-shared-nics" has field "spec.devices[0].capacity[bandwidth].value"

      Examples:
        | release | gates                     |
        | current | DRAConsumableCapacity=off |
        | 1.35    | defaults                  |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY-RANGE  A valid range lies within the capacity, its default and max on the step grid

    Scenario Outline: With <gates> at Kubernetes <release>, a range beyond the capacity is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                                    | value       |
        | spec.devices[0].capacity.memory.requestPolicy.default    | 90Gi        |
        | spec.devices[0].capacity.memory.requestPolicy.validRange | {min: 90Gi} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-shared-gpus" has no field "spec.devices[0].capacity[memory].requestPolicy"

      Examples:
        | release | gates                     |
        | current | DRAConsumableCapacity=off |
        | 1.35    | defaults                  |

  Rule: DRA-API/CAPACITY-REQUEST-POLICY-VALUES  Valid values sorted, unique, within the capacity, the default among them

    Scenario Outline: With <gates> at Kubernetes <release>, unsorted valid values are dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                                    | value              |
        | spec.devices[0].capacity.cores.requestPolicy.validValues | ["10", "50", "25"] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-shared-gpus" has no field "spec.devices[0].capacity[cores].requestPolicy"

      Examples:
        | release | gates                     |
        | current | DRAConsumableCapacity=off |
        | 1.35    | defaults                  |

  Rule: DRA-API/COMPATIBILITY-GROUPS  At most 2 compatibility groups per consumption, DNS labels, no duplicates

    Scenario: With DRADeviceCompatibilityGroups off, a repeated group is dropped, not refused
      Given kube-apiserver with feature gates "DRADeviceCompatibilityGroups=off"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                                   | value      |
        | spec.devices[0].consumesCounters[0].compatibilityGroups | [mig, mig] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.devices[0].consumesCounters[0].compatibilityGroups"
      And the stored ResourceSlice "node-1-mig-partitions" has field "spec.devices[0].consumesCounters[0].counters"

  Rule: DRA-API/COMPATIBILITY-SNAPSHOT  The allocation's group snapshot keys counter sets and keeps the slice limits

    Scenario: With DRADeviceCompatibilityGroups off, a snapshot keyed by no counter set name is dropped, not refused
      Given kube-apiserver with feature gates "DRADeviceCompatibilityGroups=off"
      And the ResourceClaim "gpu-and-nic" from the manifests
      When the user updates the status of ResourceClaim "gpu-and-nic":
        """yaml
        allocation:
          devices:
            results:
            - request: gpu
              driver: gpu.example.com
              pool: node-1
              device: gpu-0-mig-1g-0
              compatibilityGroups: {GPU-0: [mig]}
        """
      Then the request is accepted
      And the stored ResourceClaim "gpu-and-nic" has no field "status.allocation.devices.results[0].compatibilityGroups"

  Rule: DRA-API/COUNTER-SET-COUNTERS  A counter set has 1 to 32 counters with DNS-label names and quantity values

    Scenario Outline: With <gates> at Kubernetes <release>, a counter set of 33 counters is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                           | value      |
        | spec.sharedCounters[0].counters | (33 items) |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpu-counters" has no field "spec.sharedCounters"

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |

  Rule: DRA-API/DEVICE-CONSUMED-COUNTERS  A consumption names 1 to 32 counters (1.34: at most 32 per device)

    Scenario Outline: With <gates> at Kubernetes <release>, a device consuming 33 counters loses its consumption, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                        | value      |
        | spec.devices[0].consumesCounters[0].counters | (33 items) |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.devices[0].consumesCounters"
      And the stored ResourceSlice "node-1-mig-partitions" has field "spec.devices[0].attributes"

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |

  Rule: DRA-API/DEVICE-COUNTER-CONSUMPTIONS  A device consumes from at most 2 counter sets, each once

    Scenario Outline: With <gates> at Kubernetes <release>, a device consuming from three counter sets loses its consumptions, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                            | value     |
        | spec.devices[0].consumesCounters | (3 items) |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.devices[0].consumesCounters"

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |

  Rule: DRA-API/DEVICE-NODE-SELECTION  Per-device node selection only with perDeviceNodeSelection, then exactly one

    # A device's own node in a slice for one node is refused with the gate on; off, the device's field is
    # dropped and the slice keeps its node.
    Scenario Outline: With <gates> at Kubernetes <release>, a device's own node in a slice for one node is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                    | value  |
        | spec.devices[0].nodeName | node-2 |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has no field "spec.devices[0].nodeName"
      And the stored ResourceSlice "node-1-gpus" has field "spec.nodeName" set to node-1

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |

  Rule: DRA-API/SLICE-DEVICES-OR-COUNTERS  From Kubernetes 1.35 a slice holds devices or counter sets, not both

    Scenario Outline: With <gates> at Kubernetes <release>, a slice of a device and a counter set keeps the device only
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field               | value                                                       |
        | spec.sharedCounters | [{name: gpu-0-counters, counters: {memory: {value: 80Gi}}}] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.sharedCounters"
      And the stored ResourceSlice "node-1-mig-partitions" has field "spec.devices[0].name" set to gpu-0-mig-1g-0

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |

  Rule: DRA-API/SLICE-MAX-COUNTER-SETS  At most 8 counter sets per slice (1.34: at most 32 counters in all sets)

    Scenario Outline: With <gates> at Kubernetes <release>, nine counter sets are dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field               | value     |
        | spec.sharedCounters | (9 items) |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpu-counters" has no field "spec.sharedCounters"

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |

  Rule: DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY  A list-type attribute has at least one item

    # The list value is dropped, the attribute's other value stays: nothing empty is left to refuse.
    Scenario Outline: With DRAListTypeAttributes off, an empty <form> list beside a scalar value is dropped, not refused
      Given kube-apiserver with feature gates "DRAListTypeAttributes=off"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value                                   |
        | spec.devices[0].attributes | {values: {<scalar>: <one>, <form>: []}} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" has no field "spec.devices[0].attributes[values].<form>"
      And the stored ResourceSlice "node-1-cpus" has field "spec.devices[0].attributes[values].<scalar>"

      Examples:
        | form    | scalar | one  |
        | ints    | int    | 0    |
        | strings | string | pci0 |

  Rule: DRA-API/DEVICE-MAX-ATTRIBUTE-VALUES  At most 48 attribute values per device, each list item counting one

    # 48 list items and a string are one too many with the gate on; off, the list is dropped and one value is left.
    Scenario: With DRAListTypeAttributes off, a list of 48 strings beside a string value of the same attribute is dropped, not counted
      Given kube-apiserver with feature gates "DRAListTypeAttributes=off"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                         | value                                              |
        | spec.devices[0].attributes                    | {pcieRoots: {string: pci0, strings: [pci0000-00]}} |
        | spec.devices[0].attributes[pcieRoots].strings | (48 items)                                         |
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" has no field "spec.devices[0].attributes[pcieRoots].strings"
      And the stored ResourceSlice "node-1-cpus" has field "spec.devices[0].attributes[pcieRoots].string" set to pci0

  Rule: DRA-API/DEVICE-MAX-TAINTS  At most 16 taints per device (4 in Kubernetes 1.34)

    Scenario Outline: With <gates> at Kubernetes <release>, seventeen taints are dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                      |
        | spec.devices[0].taints | [{key: example.com/t, effect: NoSchedule}] |
        | spec.devices[0].taints | (17 items)                                 |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has no field "spec.devices[0].taints"

      Examples:
        | release | gates                                        |
        | current | DRADeviceTaints=off, DRADeviceTaintRules=off |
        | 1.35    | defaults                                     |

  Rule: DRA-API/DEVICE-TAINT-FORMAT  A taint has a qualified key, a label value and a known effect

    Scenario Outline: With <gates> at Kubernetes <release>, a taint of an unknown effect is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                          |
        | spec.devices[0].taints | [{key: example.com/ecc-errors, effect: Evict}] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has no field "spec.devices[0].taints"

      Examples:
        | release | gates                                        |
        | current | DRADeviceTaints=off, DRADeviceTaintRules=off |
        | 1.35    | defaults                                     |

    # A DeviceTaintRule is served and validated whatever DRADeviceTaints says: the gate guards fields of slices
    # and claims, not the rule's taint.
    Scenario: With DRADeviceTaints off, a DeviceTaintRule's taint of an unknown effect is still refused
      Given kube-apiserver with feature gates "DRADeviceTaints=off, DRADeviceTaintRules=off"
      When the user creates the DeviceTaintRule "gpu-0-maintenance" from the manifests with:
        | field             | value            |
        | spec.taint.effect | PreferNoSchedule |
      Then the request is rejected at "spec.taint.effect" by rule "DRA-API/DEVICE-TAINT-FORMAT"

  Rule: DRA-API/DEVICE-TAINT-TIME-ADDED  The API server stamps a taint written without timeAdded

    Scenario Outline: With <gates> at Kubernetes <release>, a driver's taint is dropped and nothing is stamped
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                  | value                                               |
        | spec.devices[0].taints | [{key: example.com/ecc-errors, effect: NoSchedule}] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has no field "spec.devices[0].taints"

      Examples:
        | release | gates                                        |
        | current | DRADeviceTaints=off, DRADeviceTaintRules=off |
        | 1.35    | defaults                                     |

    Scenario: With DRADeviceTaints off, an administrator's DeviceTaintRule is still stored with timeAdded
      Given kube-apiserver with feature gates "DRADeviceTaints=off, DRADeviceTaintRules=off"
      When the user creates the DeviceTaintRule "gpu-0-maintenance" from the manifests
      Then the request is accepted
      And the stored DeviceTaintRule "gpu-0-maintenance" has field "spec.taint.timeAdded"

  Rule: DRA-API/TOLERATIONS-MAX  At most 16 tolerations per request

    Scenario Outline: With <gates> at Kubernetes <release>, seventeen tolerations are dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the ResourceClaim "gpu-tolerating-maintenance" from the manifests with:
        | field                                        | value      |
        | spec.devices.requests[0].exactly.tolerations | (17 items) |
      Then the request is accepted
      And the stored ResourceClaim "gpu-tolerating-maintenance" has no field "spec.devices.requests[0].exactly.tolerations"

      Examples:
        | release | gates                                        |
        | current | DRADeviceTaints=off, DRADeviceTaintRules=off |
        | 1.35    | defaults                                     |

  Rule: DRA-API/DEVICE-TAINT-RULE  One valid taint, and a selector naming a driver, pool and device in their formats

    # DeviceTaintRules are served whatever DRADeviceTaintRules says (so that they can be cleaned up; v1.36.2's
    # pkg/registry/resource/rest/storage_resource.go), and their strategy drops nothing: the API server judges
    # them as with the gate on. Only the scheduler and the eviction controller ignore them
    # (KEP-4381/DEVICE-TAINT-RULES).
    Scenario Outline: With <gates> at Kubernetes <release>, a DeviceTaintRule with <what> is <verdict>
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      When the user creates the DeviceTaintRule "gpu-0-maintenance" from the manifests with:
        | field               | value      |
        | spec.deviceSelector | <selector> |
      Then the request is <outcome>

      Examples:
        | release | gates                   | what                          | verdict | selector                                                 | outcome                                                                      |
        | current | DRADeviceTaintRules=off | a driver and a device         | stored  | {driver: gpu.example.com, pool: worker-1, device: gpu-0} | accepted                                                                     |
        | current | DRADeviceTaintRules=off | a device that is no DNS label | refused | {device: gpu.0}                                          | rejected at "spec.deviceSelector.device" by rule "DRA-API/DEVICE-TAINT-RULE" |
        | 1.36    | defaults                | a driver that is no DNS name  | refused | {driver: GPU_Driver}                                     | rejected at "spec.deviceSelector.driver" by rule "DRA-API/DEVICE-TAINT-RULE" |

    Scenario: With DRADeviceTaintRules off, a stored DeviceTaintRule keeps its selector
      Given kube-apiserver with feature gates "DRADeviceTaintRules=off"
      When the user creates the DeviceTaintRule "gpu-0-maintenance" from the manifests with:
        | field               | value                                                    |
        | spec.deviceSelector | {driver: gpu.example.com, pool: worker-1, device: gpu-0} |
      Then the request is accepted
      And the stored DeviceTaintRule "gpu-0-maintenance" has field "spec.deviceSelector.device" set to gpu-0

  Rule: DRA-API/DEVICE-STATUS-CONDITIONS  At most 8 well-formed conditions per device, one per type

    Scenario Outline: With <gates> at Kubernetes <release>, a condition of an unknown status is dropped with the device status, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      And the ResourceClaim "one-gpu" from the manifests
      When the user updates the status of ResourceClaim "one-gpu":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - driver: gpu.example.com
          pool: fabric
          device: gpu-0
          conditions:
          - {type: gpu.example.com/attached, status: Maybe, reason: Pending, lastTransitionTime: "2026-01-01T00:00:00Z"}
        """
      Then the request is accepted
      And the stored ResourceClaim "one-gpu" has no field "status.devices"
      And the stored ResourceClaim "one-gpu" has field "status.allocation.devices.results[0].device" set to gpu-0

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/DEVICE-STATUS-MATCHES-ALLOCATION  Per-device status only for allocated devices, one entry each

    Scenario Outline: With <gates> at Kubernetes <release>, status for a device not allocated is dropped, not refused
      Given kube-apiserver version "<release>" with feature gates "<gates>"
      And the ResourceClaim "one-gpu" from the manifests
      When the user updates the status of ResourceClaim "one-gpu":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - {driver: gpu.example.com, pool: fabric, device: gpu-1}
        """
      Then the request is accepted
      And the stored ResourceClaim "one-gpu" has no field "status.devices"

      Examples:
        | release | gates                                                            |
        | current | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off |
        | 1.32    | defaults                                                         |

  Rule: DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF  A mapping goes by consumed capacity (key and multiplier) or by device count

    Scenario: With DRANodeAllocatableResources off, a mapping both ways is dropped, not refused
      Given kube-apiserver with feature gates "DRANodeAllocatableResources=off"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                    | value                                                                                   |
        | spec.devices[0].capacity                 | {cores: {value: "64"}}                                                                  |
        | spec.devices[0].nodeAllocatableResources | {cpu: {mapping: {capacityKey: cores, capacityMultiplier: "2", deviceMultiplier: "64"}}} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" has no field "spec.devices[0].nodeAllocatableResources"
      And the stored ResourceSlice "node-1-cpus" has field "spec.devices[0].capacity[cores].value"

  Rule: DRA-API/NODE-ALLOCATABLE-MAPPING-OR-OVERHEAD  Each resource has a mapping, an overhead, or both

    Scenario: With DRANodeAllocatableResources off, a resource with neither mapping nor overhead is dropped, not refused
      Given kube-apiserver with feature gates "DRANodeAllocatableResources=off"
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                                    | value        |
        | spec.devices[0].nodeAllocatableResources | {memory: {}} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpus" has no field "spec.devices[0].nodeAllocatableResources"

  Rule: DRA-API/PARTITION-TYPE-ATTRIBUTE-NEEDS-COUNTERS  Only a slice with devices that consume counters names a partition type

    Scenario: With DRAPartitionableDevicesType off, a partition type over devices consuming nothing is dropped, not refused
      Given kube-apiserver with feature gates "DRAPartitionableDevicesType=off"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                            | value                   |
        | spec.partitionTypeAttribute      | gpu.example.com/profile |
        | spec.devices[0].consumesCounters | (absent)                |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.partitionTypeAttribute"

  Rule: DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES  Every device consuming counters has the partition type as a string attribute

    Scenario: With DRAPartitionableDevicesType off, a partition type its device holds as an int is dropped, not refused
      Given kube-apiserver with feature gates "DRAPartitionableDevicesType=off"
      When the user creates the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                       | value                               |
        | spec.partitionTypeAttribute | gpu.example.com/profile             |
        | spec.devices[0].attributes  | {gpu.example.com/profile: {int: 1}} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.partitionTypeAttribute"
      And the stored ResourceSlice "node-1-mig-partitions" has field "spec.devices[0].attributes[gpu.example.com/profile].int" set to 1

  Rule: DRA-API/SKIP-NODE-OPERATIONS-PREPARE-WITH-UNPREPARE  Prepare is skipped only together with unprepare

    Scenario: With DRAOptionalNodeOperations off, a slice skipping prepare alone loses the field, not refused
      Given kube-apiserver with feature gates "DRAOptionalNodeOperations=off"
      When the user creates the ResourceSlice "fabric-nics" from the manifests with:
        | field                   | value                  |
        | spec.skipNodeOperations | [NodePrepareResources] |
      Then the request is accepted
      And the stored ResourceSlice "fabric-nics" has no field "spec.skipNodeOperations"

  Rule: DRA-API/SKIP-NODE-OPERATIONS-VALUES  A set of NodePrepareResources, NodeUnprepareResources and "*"

    Scenario: With DRAOptionalNodeOperations off, a slice listing an unknown operation loses the field, not refused
      Given kube-apiserver with feature gates "DRAOptionalNodeOperations=off"
      When the user creates the ResourceSlice "fabric-nics" from the manifests with:
        | field                   | value        |
        | spec.skipNodeOperations | [NodeAttach] |
      Then the request is accepted
      And the stored ResourceSlice "fabric-nics" has no field "spec.skipNodeOperations"

    Scenario: With DRAOptionalNodeOperations off, an allocation result listing an unknown operation loses the field, not refused
      Given kube-apiserver with feature gates "DRAOptionalNodeOperations=off"
      And the ResourceClaim "one-nic" from the manifests
      When the user updates the status of ResourceClaim "one-nic":
        """yaml
        allocation:
          devices:
            results:
            - {request: nic, driver: nic.example.com, pool: fabric, device: vlan-100, skipNodeOperations: [Prepare]}
        """
      Then the request is accepted
      And the stored ResourceClaim "one-nic" has no field "status.allocation.devices.results[0].skipNodeOperations"

  # The rules below have their gate-off rows beside their other scenarios; these are their rows at the release
  # before the gate's default turned on, run with that release's defaults.
  Rule: DRA-API/ADMIN-ACCESS-NAMESPACE  Admin access only in a namespace labelled for it

    Scenario Outline: At Kubernetes 1.33 with its defaults, a <kind> asking for admin access loses the field
      Given kube-apiserver version "1.33" with feature gates "defaults"
      When the user creates the <kind> "one-gpu" from the manifests with:
        | field                         | value |
        | <request>.exactly.adminAccess | true  |
      Then the request is accepted
      And the stored <kind> "one-gpu" has no field "<request>.exactly.adminAccess"

      Examples:
        | kind                  | request                       |
        | ResourceClaim         | spec.devices.requests[0]      |
        | ResourceClaimTemplate | spec.spec.devices.requests[0] |

  Rule: DRA-API/FIRST-AVAILABLE-SUBREQUESTS  1 to 8 subrequests with unique DNS-label names

    Scenario: At Kubernetes 1.33 with its defaults, a prioritized list is dropped and the request left with neither form
      Given kube-apiserver version "1.33" with feature gates "defaults"
      When the user creates the ResourceClaim "gpu-from-a-list" from the manifests with:
        | field                                   | value     |
        | spec.devices.requests[0].firstAvailable | (9 items) |
      Then the request is rejected at "spec.devices.requests[0]" by rule "DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE"

  Rule: DRA-API/TOLERATION-FORMAT  Known operators and effects; Exists takes no value; an empty key with Equal is accepted

    Scenario: At Kubernetes 1.35 with its defaults, a toleration of an unknown operator is dropped
      Given kube-apiserver version "1.35" with feature gates "defaults"
      When the user creates the ResourceClaim "gpu-tolerating-maintenance" from the manifests with:
        | field                                           | value                                  |
        | spec.devices.requests[0].exactly.tolerations[0] | {key: example.com/ecc, operator: Like} |
      Then the request is accepted
      And the stored ResourceClaim "gpu-tolerating-maintenance" has no field "spec.devices.requests[0].exactly.tolerations"

  Rule: DRA-API/CAPACITY-REQUEST-POLICY  A requestPolicy needs allowMultipleAllocations

    Scenario: At Kubernetes 1.35 with its defaults, a request policy on a device not shared is dropped
      Given kube-apiserver version "1.35" with feature gates "defaults"
      When the user creates the ResourceSlice "node-1-shared-gpus" from the manifests with:
        | field                                    | value |
        | spec.devices[0].allowMultipleAllocations | false |
      Then the request is accepted
      And the stored ResourceSlice "node-1-shared-gpus" has no field "spec.devices[0].capacity[memory].requestPolicy"
      And the stored ResourceSlice "node-1-shared-gpus" has no field "spec.devices[0].allowMultipleAllocations"

  Rule: DRA-API/CLASS-EXTENDED-RESOURCE-NAME  A class's extendedResourceName is an extended resource name

    Scenario: At Kubernetes 1.35 with its defaults, a class standing for a name that is no extended resource loses the field
      Given kube-apiserver version "1.35" with feature gates "defaults"
      When the user creates the DeviceClass "gpu.example.com" from the manifests with:
        | field                     | value |
        | spec.extendedResourceName | gpu   |
      Then the request is accepted
      And the stored DeviceClass "gpu.example.com" has no field "spec.extendedResourceName"

    # Stored while the gate was on, the name is kept by an update with the gate off and still judged.
    Scenario Outline: A class stored with the gate on, updated to stand for <name> with DRAExtendedResource off: <verdict>
      Given kube-apiserver with feature gates "DRAExtendedResource=on"
      And the DeviceClass "gpu.example.com" from the manifests with:
        | field                     | value           |
        | spec.extendedResourceName | example.com/gpu |
      When kube-apiserver restarts with feature gates "DRAExtendedResource=off"
      And the user updates the DeviceClass "gpu.example.com" with:
        | field                     | value  |
        | spec.extendedResourceName | <name> |
      Then the request is <outcome>
      And the stored DeviceClass "gpu.example.com" has field "spec.extendedResourceName"

      Examples:
        | name            | verdict | outcome                                                                                |
        | example.com/tpu | kept    | accepted                                                                               |
        | gpu             | refused | rejected at "spec.extendedResourceName" by rule "DRA-API/CLASS-EXTENDED-RESOURCE-NAME" |

  Rule: DRA-API/COUNTER-SET-NAMES  Counter set names are DNS labels, unique in the slice

    Scenario: At Kubernetes 1.35 with its defaults, two counter sets of one name are dropped
      Given kube-apiserver version "1.35" with feature gates "defaults"
      When the user creates the ResourceSlice "node-1-gpu-counters" from the manifests with:
        | field                       | value     |
        | spec.sharedCounters[0].name | "gpu-0"   |
        | spec.sharedCounters         | (2 items) |
        | spec.sharedCounters[1].name | "gpu-0"   |
      Then the request is accepted
      And the stored ResourceSlice "node-1-gpu-counters" has no field "spec.sharedCounters"

  Rule: DRA-API/DEVICE-STATUS-DATA  Device data is a JSON object of at most 10 KiB

    Scenario: At Kubernetes 1.32 with its defaults, device data that is a list is dropped with the device status
      Given kube-apiserver version "1.32" with feature gates "defaults"
      And the ResourceClaim "one-gpu" from the manifests
      When the user updates the status of ResourceClaim "one-gpu":
        """yaml
        allocation:
          devices:
            results:
            - {request: gpu, driver: gpu.example.com, pool: fabric, device: gpu-0}
        devices:
        - {driver: gpu.example.com, pool: fabric, device: gpu-0, data: [GPU-1234]}
        """
      Then the request is accepted
      And the stored ResourceClaim "one-gpu" has no field "status.devices"

  Rule: DRA-API/DISABLED-FIELDS-DROPPED  Gated fields are dropped on create, and kept on update only if already stored

    Scenario Outline: At Kubernetes <release> with its defaults, the fabric GPU loses its binding fields
      Given kube-apiserver version "<release>" with feature gates "defaults"
      When the user creates the objects of manifest "fabric-gpu.yaml"
      Then the request is accepted
      And the stored ResourceSlice "fabric" has no field "spec.devices[0].bindingConditions"
      And the stored ResourceSlice "fabric" has no field "spec.devices[0].bindsToNode"

      Examples:
        | release |
        | 1.35    |
        | 1.32    |

    # Stored while the gate was on, a field is kept by an update with the gate off (upstream's "feature in use"
    # checks), and the field's own rule still judges the new value: validation is not gated.
    Scenario Outline: Stored while its gate was on, <field> is kept by an update with <off> and judged: <verdict>
      Given kube-apiserver with feature gates "<on>"
      And the ResourceSlice "<slice>" from the manifests with:
        | field   | value         |
        | <using> | <using value> |
      When kube-apiserver restarts with feature gates "<off>"
      And the user updates the ResourceSlice "<slice>" with:
        | field                | value   |
        | spec.pool.generation | 2       |
        | <field>              | <value> |
      Then the request is <outcome>
      And the stored ResourceSlice "<slice>" has field "<kept>"

      @rule:DRA-API/BINDING-CONDITIONS-MAX
      Examples: binding conditions
        | off                                                              | on                                                             | slice       | using                       | using value | field                             | value                                             | verdict  | outcome                                                                                  | kept                                 |
        | DRADeviceBindingConditions=off                                   | DRADeviceBindingConditions=on, DRAResourceClaimDeviceStatus=on | fabric-gpus | spec.devices[0].bindsToNode | true        | spec.devices[0].bindingConditions | [gpu.example.com/attached, gpu.example.com/ready] | accepted | accepted                                                                                 | spec.devices[0].bindingConditions[1] |
        | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off | DRADeviceBindingConditions=on, DRAResourceClaimDeviceStatus=on | fabric-gpus | spec.devices[0].bindsToNode | true        | spec.devices[0].bindingConditions | (5 items)                                         | refused  | rejected at "spec.devices[0].bindingConditions" by rule "DRA-API/BINDING-CONDITIONS-MAX" | spec.devices[0].bindingConditions    |

      @rule:DRA-API/CAPACITY-REQUEST-POLICY-VALUES
      Examples: request policies
        | off                       | on                       | slice              | using                                    | using value | field                                                    | value              | verdict  | outcome                                                                                                                     | kept                                          |
        | DRAConsumableCapacity=off | DRAConsumableCapacity=on | node-1-shared-gpus | spec.devices[0].allowMultipleAllocations | true        | spec.devices[0].capacity.cores.requestPolicy.validValues | ["10", "25"]       | accepted | accepted                                                                                                                    | spec.devices[0].capacity[cores].requestPolicy |
        | DRAConsumableCapacity=off | DRAConsumableCapacity=on | node-1-shared-gpus | spec.devices[0].allowMultipleAllocations | true        | spec.devices[0].capacity.cores.requestPolicy.validValues | ["10", "50", "25"] | refused  | rejected at "spec.devices[0].capacity[cores].requestPolicy.validValues[2]" by rule "DRA-API/CAPACITY-REQUEST-POLICY-VALUES" | spec.devices[0].capacity[cores].requestPolicy |

      @rule:DRA-API/DEVICE-COUNTER-CONSUMPTIONS
      Examples: counter consumptions
        | off                         | on                         | slice                 | using                                          | using value    | field                            | value     | verdict  | outcome                                                                                      | kept                                |
        | DRAPartitionableDevices=off | DRAPartitionableDevices=on | node-1-mig-partitions | spec.devices[0].consumesCounters[0].counterSet | gpu-0-counters | spec.devices[0].consumesCounters | (2 items) | accepted | accepted                                                                                     | spec.devices[0].consumesCounters[1] |
        | DRAPartitionableDevices=off | DRAPartitionableDevices=on | node-1-mig-partitions | spec.devices[0].consumesCounters[0].counterSet | gpu-0-counters | spec.devices[0].consumesCounters | (3 items) | refused  | rejected at "spec.devices[0].consumesCounters" by rule "DRA-API/DEVICE-COUNTER-CONSUMPTIONS" | spec.devices[0].consumesCounters    |

      @rule:DRA-API/DEVICE-TAINT-FORMAT
      Examples: device taints
        | off                                          | on                 | slice       | using                  | using value                                          | field                  | value                                               | verdict  | outcome                                                                              | kept                          |
        | DRADeviceTaints=off, DRADeviceTaintRules=off | DRADeviceTaints=on | node-1-gpus | spec.devices[0].taints | [{key: example.com/maintenance, effect: NoSchedule}] | spec.devices[0].taints | [{key: example.com/ecc-errors, effect: NoSchedule}] | accepted | accepted                                                                             | spec.devices[0].taints[0].key |
        | DRADeviceTaints=off, DRADeviceTaintRules=off | DRADeviceTaints=on | node-1-gpus | spec.devices[0].taints | [{key: example.com/maintenance, effect: NoSchedule}] | spec.devices[0].taints | [{key: example.com/ecc-errors, effect: Evict}]      | refused  | rejected at "spec.devices[0].taints[0].effect" by rule "DRA-API/DEVICE-TAINT-FORMAT" | spec.devices[0].taints        |

      @rule:DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY
      Examples: list-type attributes
        | off                       | on                       | slice       | using                      | using value                          | field                      | value                                            | verdict  | outcome                                                                                                       | kept                                          |
        | DRAListTypeAttributes=off | DRAListTypeAttributes=on | node-1-cpus | spec.devices[0].attributes | {pcieRoots: {strings: [pci0000-00]}} | spec.devices[0].attributes | {pcieRoots: {strings: [pci0000-00, pci0000-40]}} | accepted | accepted                                                                                                      | spec.devices[0].attributes[pcieRoots].strings |
        | DRAListTypeAttributes=off | DRAListTypeAttributes=on | node-1-cpus | spec.devices[0].attributes | {pcieRoots: {strings: [pci0000-00]}} | spec.devices[0].attributes | {pcieRoots: {strings: []}}                       | refused  | rejected at "spec.devices[0].attributes[pcieRoots].strings" by rule "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY" | spec.devices[0].attributes[pcieRoots].strings |

      # One "in use" check per feature: a stored allowMultipleAllocations keeps a requestPolicy the update adds.
      @rule:DRA-API/CAPACITY-REQUEST-POLICY
      Examples: a request policy added beside a stored allowMultipleAllocations
        | off                       | on                       | slice       | using                                    | using value | field                    | value                                                                            | verdict  | outcome  | kept                                           |
        | DRAConsumableCapacity=off | DRAConsumableCapacity=on | node-1-gpus | spec.devices[0].allowMultipleAllocations | true        | spec.devices[0].capacity | {memory: {value: 80Gi, requestPolicy: {default: 10Gi, validRange: {min: 10Gi}}}} | accepted | accepted | spec.devices[0].capacity[memory].requestPolicy |
