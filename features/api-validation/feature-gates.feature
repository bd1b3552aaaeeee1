@api-validation @kep-5007 @kep-5963
Feature: With a feature gate off, the API server drops the fields it guards (KEP-5007 and KEP-5963 Feature Enablement and Rollback)

  Rule: DRA-API/DISABLED-FIELDS-DROPPED  Gated fields are dropped on create, and kept on update only if already stored

    Scenario Outline: A fabric GPU published with <gate> <state>
      Given a cluster with feature gates "<gate>" <state>
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [gpu.example.com/attached]
            bindingFailureConditions: [gpu.example.com/attach-failed]
            taints: [{key: gpu.example.com/draining, effect: NoSchedule}]
            consumesCounters:
            - counterSet: gpu-0
              compatibilityGroups: [whole]
              counters: {memory: {value: 80Gi}}
        """
      Then the request is accepted
      And the stored ResourceSlice "fabric" <verb> field "<field>"

      Examples:
        | gate                         | state | verb   | field                                                      |
        | DRADeviceBindingConditions   | off   | has no | spec.devices[0].bindingConditions                          |
        | DRADeviceBindingConditions   | off   | has no | spec.devices[0].bindsToNode                                |
        | DRAResourceClaimDeviceStatus | off   | has no | spec.devices[0].bindingFailureConditions                   |
        | DRADeviceBindingConditions   | on    | has    | spec.devices[0].bindingConditions                          |
        | DRADeviceCompatibilityGroups | off   | has no | spec.devices[0].consumesCounters[0].compatibilityGroups    |
        | DRADeviceCompatibilityGroups | on    | has    | spec.devices[0].consumesCounters[0].compatibilityGroups    |
        | DRADeviceTaints              | off   | has no | spec.devices[0].taints                                     |

    Scenario Outline: A claim's allocation written with <gate> off
      Given a cluster with feature gates "<gate>" off
      And the ResourceClaim:
        """yaml
        metadata: {name: training}
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: gpu.example.com}
        """
      When the user updates the status of ResourceClaim "training":
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
      And the stored ResourceClaim "training" has no field "<field>"

      Examples:
        | gate                         | field                                                           |
        | DRADeviceBindingConditions   | status.allocation.allocationTimestamp                           |
        | DRADeviceBindingConditions   | status.allocation.devices.results[0].bindingConditions          |
        | DRADeviceCompatibilityGroups | status.allocation.devices.results[0].compatibilityGroups        |
        | DRAOptionalNodeOperations    | status.allocation.devices.results[0].skipNodeOperations         |

    Scenario Outline: A partitioned CPU published with <gate> <state>
      Given a cluster with feature gates "<gate>" <state>
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: node-1-cpus}
        spec:
          driver: cpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          partitionTypeAttribute: cpu.example.com/kind
          skipNodeOperations: [NodeUnprepareResources]
          devices:
          - name: ccx-0
            attributes:
              kind: {string: ccx}
            consumesCounters:
            - counterSet: socket-0
              counters: {cores: {value: "8"}}
            nodeAllocatableResources:
              cpu:
                mapping: {deviceMultiplier: "8"}
        """
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" <verb> field "<field>"

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
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: node-1-cpus}
        spec:
          driver: cpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: cpu-0
            attributes:
              model: {string: epyc}
              pcieRoots: {strings: [pci0000-00, pci0000-40]}
        """
      Then the request is <outcome>

      Examples:
        | state | outcome                                                                                             |
        | on    | accepted                                                                                            |
        | off   | rejected at "spec.devices[0].attributes[pcieRoots]" by rule "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"    |

    Scenario: List values stored while the gate was on survive an update after it is turned off
      Given a cluster with feature gates "DRAListTypeAttributes" on
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-cpus}
        spec:
          driver: cpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: cpu-0
            attributes:
              pcieRoots: {strings: [pci0000-00]}
        """
      When kube-apiserver restarts with feature gates "DRAListTypeAttributes=off"
      And the user updates the spec of ResourceSlice "node-1-cpus":
        """yaml
        driver: cpu.example.com
        pool: {name: node-1, generation: 2, resourceSliceCount: 1}
        nodeName: node-1
        devices:
        - name: cpu-0
          attributes:
            pcieRoots: {strings: [pci0000-00, pci0000-40]}
        """
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" has field "spec.devices[0].attributes[pcieRoots].strings"

    Scenario: Groups stored while the gate was on survive an update after it is turned off
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-1g-0
            consumesCounters:
            - {counterSet: gpu-0-counters, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      When kube-apiserver restarts with feature gates "DRADeviceCompatibilityGroups=off"
      And the user updates the spec of ResourceSlice "node-1-devices":
        """yaml
        driver: gpu.example.com
        pool: {name: node-1, generation: 2, resourceSliceCount: 2}
        nodeName: node-1
        devices:
        - name: gpu-0-mig-1g-0
          consumesCounters:
          - {counterSet: gpu-0-counters, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      Then the request is accepted
      And the stored ResourceSlice "node-1-devices" has field "spec.devices[0].consumesCounters[0].compatibilityGroups"

    Scenario: Groups added by an update while the gate is off are dropped
      Given a cluster with feature gates "DRADeviceCompatibilityGroups" off
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-devices}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-1g-0
            consumesCounters:
            - {counterSet: gpu-0-counters, counters: {multiprocessors: {value: "20"}}}
        """
      When the user updates the spec of ResourceSlice "node-1-devices":
        """yaml
        driver: gpu.example.com
        pool: {name: node-1, generation: 2, resourceSliceCount: 2}
        nodeName: node-1
        devices:
        - name: gpu-0-mig-1g-0
          consumesCounters:
          - {counterSet: gpu-0-counters, compatibilityGroups: [mig], counters: {multiprocessors: {value: "20"}}}
        """
      Then the request is accepted
      And the stored ResourceSlice "node-1-devices" has no field "spec.devices[0].consumesCounters[0].compatibilityGroups"
