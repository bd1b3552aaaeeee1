@api-validation @kep-5007 @kep-5963
Feature: With a feature gate off, the API server drops the fields it guards (KEP-5007 and KEP-5963 Feature Enablement and Rollback)

  Rule: DRA-API/DISABLED-FIELDS-DROPPED  Gated fields are dropped on create, and kept on update only if already stored

    Scenario Outline: A fabric GPU published with <gate> <state>
      Given a cluster with feature gates "<gate>" <state>
      When the user creates the objects of manifest "fabric-gpu.yaml"
      Then the request is accepted
      And the stored ResourceSlice "fabric" <verb> field "<field>"

      Examples:
        | gate                         | state | verb   | field                                                      |
        | DRADeviceBindingConditions   | off   | has no | spec.devices[0].bindingConditions                          |
        | DRADeviceBindingConditions   | off   | has no | spec.devices[0].bindsToNode                                |
        | DRAResourceClaimDeviceStatus, DRADeviceBindingConditions | off | has no | spec.devices[0].bindingFailureConditions |
        | DRADeviceBindingConditions   | on    | has    | spec.devices[0].bindingConditions                          |
        | DRADeviceCompatibilityGroups | off   | has no | spec.devices[0].consumesCounters[0].compatibilityGroups    |
        | DRADeviceCompatibilityGroups | on    | has    | spec.devices[0].consumesCounters[0].compatibilityGroups    |
        | DRADeviceTaints, DRADeviceTaintRules | off | has no | spec.devices[0].taints                         |

    Scenario Outline: A claim's allocation written with <gate> off
      Given a cluster with feature gates "<gate>" off
      And the ResourceClaim "one-gpu" from the manifests
      When the user updates the status of ResourceClaim "one-gpu":
        """yaml
        allocation:
          allocationTimestamp: "2026-01-01T00:00:00Z"
          devices:
            results:
            - request: gpu
              driver: gpu.example.com
              pool: node-1
              device: gpu-0-mig-1g-0
              bindingConditions: [gpu.example.com/attached]
              bindingFailureConditions: [gpu.example.com/attach-failed]
              compatibilityGroups: {gpu-0-counters: [mig]}
              skipNodeOperations: [NodeUnprepareResources]
        """
      Then the request is accepted
      And the stored ResourceClaim "one-gpu" has no field "<field>"

      Examples:
        | gate                         | field                                                           |
        | DRADeviceBindingConditions   | status.allocation.allocationTimestamp                           |
        | DRADeviceBindingConditions   | status.allocation.devices.results[0].bindingConditions          |
        | DRADeviceCompatibilityGroups | status.allocation.devices.results[0].compatibilityGroups        |
        | DRAOptionalNodeOperations    | status.allocation.devices.results[0].skipNodeOperations         |

    Scenario Outline: A partitioned CPU published with <gate> <state>
      Given a cluster with feature gates "<gate>" <state>
      When the user creates the ResourceSlice "node-1-ccx" from the manifests
      Then the request is accepted
      And the stored ResourceSlice "node-1-ccx" <verb> field "<field>"

      Examples:
        | gate                         | state | verb   | field                                         |
        | DRANodeAllocatableResources  | off   | has no | spec.devices[0].nodeAllocatableResources      |
        | DRANodeAllocatableResources  | on    | has    | spec.devices[0].nodeAllocatableResources      |
        | DRAPartitionableDevicesType  | off   | has no | spec.partitionTypeAttribute                   |
        | DRAPartitionableDevicesType  | on    | has    | spec.partitionTypeAttribute                   |
        | DRAOptionalNodeOperations    | off   | has no | spec.skipNodeOperations                       |
        | DRAOptionalNodeOperations    | on    | has    | spec.skipNodeOperations                       |

    Scenario Outline: A list-type attribute written with DRAListTypeAttributes <state>
      Given a cluster with feature gates "DRAListTypeAttributes" <state>
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value                                                                   |
        | spec.devices[0].attributes | {model: {string: epyc}, pcieRoots: {strings: [pci0000-00, pci0000-40]}} |
      Then the request is <outcome>

      Examples:
        | state | outcome                                                                                             |
        | on    | accepted                                                                                            |
        | off   | rejected at "spec.devices[0].attributes[pcieRoots]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"    |

    Scenario: List values stored while the gate was on survive an update after it is turned off
      Given a cluster with feature gates "DRAListTypeAttributes" on
      And the ResourceSlice "node-1-cpus" from the manifests with:
        | field                      | value                                |
        | spec.devices[0].attributes | {pcieRoots: {strings: [pci0000-00]}} |
      When kube-apiserver restarts with feature gates "DRAListTypeAttributes=off"
      And the user updates the ResourceSlice "node-1-cpus" with:
        | field                                         | value                    |
        | spec.pool.generation                          | 2                        |
        | spec.devices[0].attributes[pcieRoots].strings | [pci0000-00, pci0000-40] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" has field "spec.devices[0].attributes[pcieRoots].strings"

    Scenario: Groups stored while the gate was on survive an update after it is turned off
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
      And the ResourceSlice "node-1-mig-partitions" from the manifests with:
        | field                                                   | value |
        | spec.devices[0].consumesCounters[0].compatibilityGroups | [mig] |
      When kube-apiserver restarts with feature gates "DRADeviceCompatibilityGroups=off"
      And the user updates the ResourceSlice "node-1-mig-partitions" with:
        | field                                                   | value |
        | spec.pool.generation                                    | 2     |
        | spec.devices[0].consumesCounters[0].compatibilityGroups | [mig] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has field "spec.devices[0].consumesCounters[0].compatibilityGroups"

    Scenario: Groups added by an update while the gate is off are dropped
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" off
      And the ResourceSlice "node-1-mig-partitions" from the manifests
      When the user updates the ResourceSlice "node-1-mig-partitions" with:
        | field                                                   | value |
        | spec.pool.generation                                    | 2     |
        | spec.devices[0].consumesCounters[0].compatibilityGroups | [mig] |
      Then the request is accepted
      And the stored ResourceSlice "node-1-mig-partitions" has no field "spec.devices[0].consumesCounters[0].compatibilityGroups"

  Rule: DRA-API/OLDER-RELEASE-UNKNOWN-FIELDS  An API server older than a field neither serves it nor keeps it

    # The same field, stored by a current API server with every gate on, then written again by its owner
    # through a current API server with the field's gate off, or through one of the release before the gate
    # existed; then read again by a current API server.
    Scenario Outline: <field> stored by a current API server, then written again through <server>
      Given kube-apiserver with feature gates "DRADeviceCompatibilityGroups=on"
      And the objects of manifest "fabric-gpu.yaml"
      When kube-apiserver restarts as version "<release>" with feature gates "<gates>"
      Then the stored ResourceSlice "fabric" <served> field "<field>"
      When the objects of manifest "fabric-gpu.yaml" are written again
      And kube-apiserver restarts as version "current" with feature gates "DRADeviceCompatibilityGroups=on"
      Then the stored ResourceSlice "fabric" <kept> field "<field>"

      Examples: a current API server with the gate off serves and keeps what is stored
        | server                           | release | gates                              | served | kept | field                                                   |
        | DRADeviceBindingConditions off   | current | DRADeviceBindingConditions=off     | has    | has  | spec.devices[0].bindingConditions                       |
        | DRADeviceCompatibilityGroups off | current | DRADeviceCompatibilityGroups=off   | has    | has  | spec.devices[0].consumesCounters[0].compatibilityGroups |
        | DRAConsumableCapacity off        | current | DRAConsumableCapacity=off          | has    | has  | spec.devices[1].allowMultipleAllocations                |

      Examples: an API server older than the field serves nothing of it and loses it on the write
        | server | release | gates    | served | kept   | field                                                   |
        | 1.33   | 1.33    | defaults | has no | has no | spec.devices[0].bindingConditions                       |
        | 1.33   | 1.33    | defaults | has no | has no | spec.devices[0].bindsToNode                             |
        | 1.36   | 1.36    | defaults | has no | has no | spec.devices[0].consumesCounters[0].compatibilityGroups |
        | 1.33   | 1.33    | defaults | has no | has no | spec.devices[1].allowMultipleAllocations                |
        | 1.32   | 1.32    | defaults | has no | has no | spec.devices[0].taints                                  |

    Scenario: Downgraded and upgraded again before anything was written, the API server serves the stored fields again
      Given kube-apiserver with feature gates "DRADeviceCompatibilityGroups=on"
      And the objects of manifest "fabric-gpu.yaml"
      When kube-apiserver restarts as version "1.36" with feature gates "defaults"
      Then the stored ResourceSlice "fabric" has no field "spec.devices[0].consumesCounters[0].compatibilityGroups"
      And the stored ResourceSlice "fabric" has field "spec.devices[0].bindingConditions"
      When kube-apiserver restarts as version "current" with feature gates "DRADeviceCompatibilityGroups=on"
      Then the stored ResourceSlice "fabric" has field "spec.devices[0].consumesCounters[0].compatibilityGroups"
