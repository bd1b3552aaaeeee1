@kep-5007
Feature: The API server keeps, checks and gates the binding fields of devices (KEP-5007 API)

  The detailed limits are in the API validation catalogue (features/api-validation); these scenarios
  check the KEP-level statement of each, in the same vocabulary.

  Both gates are on by default at the current release; a scenario that turns one off says so. With either off in
  kube-apiserver, the binding fields are dropped before validation (upstream's ResourceSlice strategy, v1.36.2), so
  a slice the checks below refuse is stored, without them.

  Rule: KEP-5007/CONDITIONS-MAX-FOUR  At most four conditions of each kind per device

    @shape:conditions:over-max
    Scenario Outline: A fifth binding condition with <gate> <setting>
      Given a cluster with feature gates "<gate>" <setting>
      When the user creates the ResourceSlice with "spec.devices[0].bindingConditions" repeated 5 times:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindingConditions: [gpu.example.com/attached]
            bindingFailureConditions: [gpu.example.com/attach-failed]
        """
      Then <verdict>

      Examples:
        | gate                                                     | setting | verdict                                                                                          |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | on      | the request is rejected at "spec.devices[0].bindingConditions" by rule "DRA-API/BINDING-CONDITIONS-MAX" |
        | DRADeviceBindingConditions                               | off     | device "gpu-0" of ResourceSlice "fabric" has no binding fields                                    |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | off     | device "gpu-0" of ResourceSlice "fabric" has no binding fields |

    # Shapes walk (issue 39): the limit itself is allowed.
    @shape:conditions:max
    Scenario: Four binding conditions are accepted
      When the user creates the ResourceSlice with "spec.devices[0].bindingConditions" repeated 4 times:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindingConditions: [gpu.example.com/attached]
            bindingFailureConditions: [gpu.example.com/attach-failed]
        """
      Then the request is accepted

  Rule: KEP-5007/CONDITION-TYPE-FORMAT  Every entry is a condition type

    Scenario Outline: A condition type with a space, with <gate> <setting>
      Given a cluster with feature gates "<gate>" <setting>
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindingConditions: [gpu.example.com/is attached]
            bindingFailureConditions: [gpu.example.com/attach-failed]
        """
      Then <verdict>

      Examples:
        | gate                                                     | setting | verdict                                                                                                |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | on      | the request is rejected at "spec.devices[0].bindingConditions[0]" by rule "DRA-API/BINDING-CONDITIONS-FORMAT" |
        | DRADeviceBindingConditions                               | off     | device "gpu-0" of ResourceSlice "fabric" has no binding fields                                          |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | off     | device "gpu-0" of ResourceSlice "fabric" has no binding fields |

  Rule: KEP-5007/CONDITION-LISTS-PAIRED  Both lists together, each condition in one list only

    Scenario Outline: Binding conditions without failure conditions, with <gate> <setting>
      Given a cluster with feature gates "<gate>" <setting>
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindingConditions: [gpu.example.com/attached]
        """
      Then <verdict>

      Examples:
        | gate                                                     | setting | verdict                                                                                                   |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | on      | the request is rejected at "spec.devices[0].bindingFailureConditions" by rule "DRA-API/BINDING-CONDITIONS-TOGETHER" |
        | DRADeviceBindingConditions                               | off     | device "gpu-0" of ResourceSlice "fabric" has no binding fields                                             |
        | DRADeviceBindingConditions, DRAResourceClaimDeviceStatus | off     | device "gpu-0" of ResourceSlice "fabric" has no binding fields |

    Scenario: A condition in both lists is refused
      When the user creates the ResourceSlice:
        """yaml
        metadata: {name: fabric}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindingConditions: [gpu.example.com/attached]
            bindingFailureConditions: [gpu.example.com/attached]
        """
      Then the request is rejected at "spec.devices[0].bindingFailureConditions[0]" by rule "DRA-API/BINDING-CONDITIONS-DISJOINT"

  Rule: KEP-5007/APISERVER-STRIPS-FIELDS  An API server with either gate off drops the fields

    # The first row is DEVICE-FIELDS' stored-as-written; the others are its gate-off side.
    @rule:KEP-5007/DEVICE-FIELDS
    Scenario Outline: An API server with <gates> <stored>
      Given kube-apiserver with feature gates "<gates>"
      When the ResourceSlice is created:
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
        """
      Then device "gpu-0" of ResourceSlice "fabric" <stored>

      Examples:
        | gates                            | stored               |
        | defaults                         | has binding fields    |
        | DRADeviceBindingConditions=off   | has no binding fields |
        | DRADeviceBindingConditions=off, DRAResourceClaimDeviceStatus=off | has no binding fields |

    @upstream-differs:allocation-timestamp-kept-with-gate-off
    Scenario: With the gate off in the API server only, the copies and the timestamp are dropped from claims too
      Given a node "worker-1"
      And the device class "fabric-gpu" selecting driver "gpu.example.com"
      And the ResourceSlice:
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
        """
      And a claim "training" for one "fabric-gpu" device
      When kube-apiserver restarts with feature gates "DRADeviceBindingConditions=off"
      And a pod "trainer" using claim "training" is created
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And the allocation of claim "training" carries no binding conditions
      And claim "training" has no allocationTimestamp
