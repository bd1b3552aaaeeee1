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
        """
      Then the request is accepted
      And the stored ResourceClaim "training" has no field "<field>"

      Examples:
        | gate                         | field                                                           |
        | DRADeviceBindingConditions   | status.allocation.allocationTimestamp                           |
        | DRADeviceBindingConditions   | status.allocation.devices.results[0].bindingConditions          |
        | DRADeviceCompatibilityGroups | status.allocation.devices.results[0].compatibilityGroups        |

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
