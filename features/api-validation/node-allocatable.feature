@api-validation
Feature: A device says which node-allocatable resources it stands for (resource.k8s.io/v1 Device.nodeAllocatableResources)

  Background:
    Given a cluster with feature gates "DRANodeAllocatableResources" on

  Rule: DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES  Only cpu, memory and hugepages-<size>, never an extended resource

    Scenario Outline: A device standing for "<resource>"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                    | value                                              |
        | spec.devices[0].nodeAllocatableResources | {"<resource>": {mapping: {deviceMultiplier: "8"}}} |
      Then the request is <outcome>

      Examples:
        | resource        | outcome                                                                                                                   |
        | cpu             | accepted                                                                                                                  |
        | memory          | accepted                                                                                                                  |
        | hugepages-1Gi   | accepted                                                                                                                  |
        | example.com/gpu | rejected at "spec.devices[0].nodeAllocatableResources[example.com/gpu]" by rule "DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES" |
        | Memory          | rejected at "spec.devices[0].nodeAllocatableResources[Memory]" by rule "DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES"          |

    Scenario Outline: With DRANodeAllocatableResources off in kube-apiserver, a device standing for "<resource>" loses the field
      Given kube-apiserver with feature gates "DRANodeAllocatableResources=off"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                    | value                                              |
        | spec.devices[0].nodeAllocatableResources | {"<resource>": {mapping: {deviceMultiplier: "8"}}} |
      Then the request is accepted
      And the stored ResourceSlice "node-1-cpus" has no field "spec.devices[0].nodeAllocatableResources"

      Examples:
        | resource        |
        | cpu             |
        | example.com/gpu |

    # Kubernetes 1.36's alpha form of the field: other name, flatter entries, any native resource name.
    Scenario Outline: On Kubernetes 1.36, a device mapping "<resource>"
      Given kube-apiserver version "1.36" with feature gates "DRANodeAllocatableResources=on"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                           | value                                               |
        | spec.devices[0].capacity                        | {cores: {value: "64"}}                              |
        | spec.devices[0].nodeAllocatableResourceMappings | {"<resource>": {capacityKey: cores, allocationMultiplier: "2"}} |
      Then the request is <outcome>

      Examples:
        | resource        | outcome                                                                                                                          |
        | cpu             | accepted                                                                                                                         |
        | hugepages-2Mi   | accepted                                                                                                                         |
        | example.com/gpu | rejected at "spec.devices[0].nodeAllocatableResourceMappings[example.com/gpu]" by rule "DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES" |

  Rule: DRA-API/NODE-ALLOCATABLE-MAPPING-OR-OVERHEAD  Each resource has a mapping, an overhead, or both

    Scenario Outline: A GPU whose host memory use is given as <how>
      When the user creates the ResourceSlice "node-1-gpus" from the manifests with:
        | field                                    | value             |
        | spec.devices[0].nodeAllocatableResources | {memory: <entry>} |
      Then the request is <outcome>

      Examples:
        | how                    | entry                                                               | outcome                                                                                                                |
        | an overhead            | {overhead: {perPod: 1Gi, perContainer: 256Mi}}                      | accepted                                                                                                               |
        | a mapping              | {mapping: {deviceMultiplier: 4Gi}}                                  | accepted                                                                                                               |
        | a mapping and overhead | {mapping: {deviceMultiplier: 4Gi}, overhead: {perPod: 1Gi}}         | accepted                                                                                                               |
        | nothing                | {}                                                                  | rejected at "spec.devices[0].nodeAllocatableResources[memory]" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-OR-OVERHEAD"  |

    Scenario Outline: On Kubernetes 1.36, a CPU socket mapped <how>
      Given kube-apiserver version "1.36" with feature gates "DRANodeAllocatableResources=on"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                           | value                  |
        | spec.devices[0].capacity                        | {cores: {value: "64"}} |
        | spec.devices[0].nodeAllocatableResourceMappings | {cpu: <entry>}         |
      Then the request is <outcome>

      Examples:
        | how              | entry                         | outcome                                                                                                                     |
        | by a key alone   | {capacityKey: cores}          | accepted                                                                                                                    |
        | by device count  | {allocationMultiplier: "2"}   | accepted                                                                                                                    |
        | by nothing (its default of 1) | {}               | accepted                                                                                                                    |

  Rule: DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF  A mapping goes by consumed capacity (key and multiplier) or by device count

    Scenario Outline: A CPU socket mapped <how>
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                    | value                       |
        | spec.devices[0].allowMultipleAllocations | true                        |
        | spec.devices[0].capacity                 | {cores: {value: "64"}}      |
        | spec.devices[0].nodeAllocatableResources | {cpu: {mapping: <mapping>}} |
      Then the request is <outcome>

      Examples:
        | how                      | mapping                                                     | outcome                                                                                                                          |
        | by consumed cores        | {capacityKey: cores, capacityMultiplier: "2"}               | accepted                                                                                                                         |
        | by device count          | {deviceMultiplier: "64"}                                    | accepted                                                                                                                         |
        | by a key alone           | {capacityKey: cores}                                        | rejected at "spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityMultiplier" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF" |
        | by a multiplier alone    | {capacityMultiplier: "2"}                                   | rejected at "spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityKey" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"        |
        | both ways                | {capacityKey: cores, capacityMultiplier: "2", deviceMultiplier: "64"} | rejected at "spec.devices[0].nodeAllocatableResources[cpu].mapping" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"  |
        | no way at all            | {}                                                          | rejected at "spec.devices[0].nodeAllocatableResources[cpu].mapping" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"            |

    Scenario Outline: On Kubernetes 1.36, a CPU socket's mapping <how>
      Given kube-apiserver version "1.36" with feature gates "DRANodeAllocatableResources=on"
      When the user creates the ResourceSlice "node-1-cpus" from the manifests with:
        | field                                           | value                  |
        | spec.devices[0].capacity                        | {cores: {value: "64"}} |
        | spec.devices[0].nodeAllocatableResourceMappings | {cpu: <entry>}         |
      Then the request is <outcome>

      Examples:
        | how                     | entry                        | outcome                                                                                                                                   |
        | by a zero multiplier    | {allocationMultiplier: "0"}  | rejected at "spec.devices[0].nodeAllocatableResourceMappings[cpu].allocationMultiplier" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF" |
        | by a capacity it lacks  | {capacityKey: threads}       | rejected at "spec.devices[0].nodeAllocatableResourceMappings[cpu].capacityKey" by rule "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"          |
