@api-validation
Feature: A driver lets the kubelet skip preparing or unpreparing its devices (KEP-5945 skipNodeOperations)

  Background:
    Given a cluster with feature gates "DRAOptionalNodeOperations" on
    And the ResourceClaim "one-nic" from the manifests

  Rule: DRA-API/SKIP-NODE-OPERATIONS-VALUES  A set of NodePrepareResources, NodeUnprepareResources and "*"

    Scenario Outline: A slice listing <operations>
      When the user creates the ResourceSlice "fabric-nics" from the manifests with:
        | field                   | value        |
        | spec.skipNodeOperations | <operations> |
      Then the request is <outcome>

      Examples:
        | operations                                       | outcome                                                                                   |
        | [NodeUnprepareResources]                         | accepted                                                                                  |
        | ["*"]                                            | accepted                                                                                  |
        | [NodeUnprepareResources, NodeUnprepareResources] | rejected at "spec.skipNodeOperations[1]" by rule "DRA-API/SKIP-NODE-OPERATIONS-VALUES"    |
        | [NodeAttach]                                     | rejected at "spec.skipNodeOperations[0]" by rule "DRA-API/SKIP-NODE-OPERATIONS-VALUES"    |

    Scenario Outline: An allocation result listing <operations>
      When the user updates the status of ResourceClaim "one-nic":
        """yaml
        allocation:
          devices:
            results:
            - request: nic
              driver: nic.example.com
              pool: fabric
              device: vlan-100
              skipNodeOperations: <operations>
        """
      Then the request is <outcome>

      Examples:
        | operations   | outcome                                                                                                             |
        | ["*"]        | accepted                                                                                                            |
        | ["*", "*"]   | rejected at "status.allocation.devices.results[0].skipNodeOperations[1]" by rule "DRA-API/SKIP-NODE-OPERATIONS-VALUES" |
        | [Prepare]    | rejected at "status.allocation.devices.results[0].skipNodeOperations[0]" by rule "DRA-API/SKIP-NODE-OPERATIONS-VALUES" |

  Rule: DRA-API/SKIP-NODE-OPERATIONS-PREPARE-WITH-UNPREPARE  Prepare is skipped only together with unprepare

    Scenario Outline: A slice skipping <operations> on its devices
      When the user creates the ResourceSlice "fabric-nics" from the manifests with:
        | field                   | value        |
        | spec.skipNodeOperations | <operations> |
      Then the request is <outcome>

      Examples:
        | operations                                     | outcome                                                                                                |
        | [NodePrepareResources, NodeUnprepareResources] | accepted                                                                                               |
        | [NodePrepareResources, "*"]                    | accepted                                                                                               |
        | [NodeUnprepareResources]                       | accepted                                                                                               |
        | [NodePrepareResources]                         | rejected at "spec.skipNodeOperations" by rule "DRA-API/SKIP-NODE-OPERATIONS-PREPARE-WITH-UNPREPARE"    |

    Scenario Outline: An allocation result skipping <operations> for its device
      When the user updates the status of ResourceClaim "one-nic":
        """yaml
        allocation:
          devices:
            results:
            - request: nic
              driver: nic.example.com
              pool: fabric
              device: vlan-100
              skipNodeOperations: <operations>
        """
      Then the request is <outcome>

      Examples:
        | operations                                     | outcome                                                                                                                          |
        | [NodePrepareResources, NodeUnprepareResources] | accepted                                                                                                                         |
        | [NodePrepareResources]                         | rejected at "status.allocation.devices.results[0].skipNodeOperations" by rule "DRA-API/SKIP-NODE-OPERATIONS-PREPARE-WITH-UNPREPARE" |
