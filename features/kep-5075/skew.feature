@kep-5075
Feature: DRAConsumableCapacity off, in the scheduler or the API server (KEP-5075 version skew)

  Background:
    Given a node "worker-1"
    And the device class "nic" selecting driver "nic.example.com"

  Rule: KEP-5075/SCHEDULER-GATE-OFF  Without the gate the scheduler allocates shared devices whole

    # The gate turned on by default at 1.36: a 1.35 scheduler left at its defaults has it off.
    Scenario Outline: kube-scheduler with DRAConsumableCapacity <gate>, two plain claims on one shared NIC
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-nics}
        spec:
          driver: nic.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: eth1
            allowMultipleAllocations: true
            capacity:
              bandwidth: {value: 10G, requestPolicy: {default: 1G, validRange: {min: 1G, step: 1G}}}
        """
      And a claim "first" for one "nic" device
      And a claim "second" for one "nic" device
      And a pod "app-1" using claim "first"
      When the scheduler runs
      Then pod "app-1" is bound to node "worker-1"
      When a pod "app-2" using claim "second" is created
      And the scheduler runs
      Then <second>

      Examples:
        | gate                  | release | gates                     | second                                      |
        | on                    | current | DRAConsumableCapacity=on  | claim "second" is allocated device "eth1"   |
        | off                   | current | DRAConsumableCapacity=off | pod "app-2" is not scheduled                |
        | off (1.35's default)  | 1.35    | defaults                  | pod "app-2" is not scheduled                |
        | on (1.36's default)   | 1.36    | defaults                  | claim "second" is allocated device "eth1"   |

    Scenario: A claim asking for capacity is a scheduling error with the gate off
      Given kube-scheduler with feature gates "DRAConsumableCapacity=off"
      And the objects of manifest "shared-nic.yaml"
      And the ResourceClaim:
        """yaml
        metadata: {name: fast}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 2G}}}}
        """
      And a pod "app" using claim "fast"
      When the scheduler runs
      Then pod "app" is not scheduled

    # D-4381-8: with DRADeviceBindingConditions off too, upstream runs its stable allocator, which has no
    # capacity requests: the claim gets the NIC whole, whatever it asks for.
    Scenario: With DRADeviceBindingConditions off as well, the capacity asked for is ignored
      Given kube-scheduler with feature gates "DRAConsumableCapacity=off,DRADeviceBindingConditions=off"
      And the objects of manifest "shared-nic.yaml"
      And the ResourceClaim:
        """yaml
        metadata: {name: fast}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 20G}}}}
        """
      And a pod "app" using claim "fast"
      When the scheduler runs
      Then pod "app" is bound to node "worker-1"
      And claim "fast" is allocated device "eth1"

    Scenario Outline: A share allocated while the gate was on holds the NIC whole once kube-scheduler has it <gate>
      Given kube-scheduler with feature gates "DRAConsumableCapacity=<gate>"
      And the objects of manifest "shared-nic.yaml"
      And a claim "old" for one "nic" device
      And the Pod:
        """yaml
        metadata: {name: holder}
        spec:
          nodeName: worker-1
          containers: [{name: main, image: registry.example/web:1}]
          resourceClaims: [{name: net, resourceClaimName: old}]
        """
      And the status of claim "old" is:
        """yaml
        reservedFor: [{resource: pods, name: holder}]
        allocation:
          devices:
            results:
            - request: device
              driver: nic.example.com
              pool: worker-1
              device: eth1
              shareID: 6f2b0a52-63b8-4b5e-9e4e-0c1a3b2d4e5f
              consumedCapacity: {bandwidth: 2G}
          nodeSelector:
            nodeSelectorTerms:
            - matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: new}
        spec:
          devices:
            requests:
            - name: nic
              exactly:
                deviceClassName: nic
                selectors: [{cel: {expression: device.driver == "nic.example.com"}}]
        """
      And a pod "app" using claim "new"
      When the scheduler runs
      Then <outcome>

      Examples:
        | gate | outcome                                                                               |
        | on   | pod "app" is not scheduled                                                            |
        | off  | pod "app" is not scheduled                                                            |

    Scenario: With the gate on, what the old share leaves is still there for a claim that asks for it
      Given the objects of manifest "shared-nic.yaml"
      And a claim "old" for one "nic" device
      And the Pod:
        """yaml
        metadata: {name: holder}
        spec:
          nodeName: worker-1
          containers: [{name: main, image: registry.example/web:1}]
          resourceClaims: [{name: net, resourceClaimName: old}]
        """
      And the status of claim "old" is:
        """yaml
        reservedFor: [{resource: pods, name: holder}]
        allocation:
          devices:
            results:
            - request: device
              driver: nic.example.com
              pool: worker-1
              device: eth1
              shareID: 6f2b0a52-63b8-4b5e-9e4e-0c1a3b2d4e5f
              consumedCapacity: {bandwidth: 2G}
          nodeSelector:
            nodeSelectorTerms:
            - matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: new}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 8G}}}}
        """
      And a pod "app" using claim "new"
      When the scheduler runs
      Then pod "app" is bound to node "worker-1"
      And device "eth1" has 2 shares, each with its own shareID

  Rule: KEP-5075/VERSION-SKEW  The API server's gate decides whether the fields exist at all

    Scenario Outline: kube-apiserver <apiserver>, kube-scheduler <scheduler>: two claims for 4G of one NIC
      Given kube-apiserver version "<apiserver release>" with feature gates "<apiserver gates>"
      And kube-scheduler with feature gates "DRAConsumableCapacity=<scheduler>"
      And the objects of manifests "shared-nic.yaml, four-gig.yaml, web-1-and-web-2.yaml"
      When the scheduler runs
      Then <web-1>
      And <web-2>

      Examples:
        | apiserver | apiserver release | apiserver gates           | scheduler | web-1                                   | web-2                                   |
        | on        | current           | DRAConsumableCapacity=on  | on        | pod "web-1" is bound to node "worker-1" | pod "web-2" is bound to node "worker-1" |
        | on        | current           | DRAConsumableCapacity=on  | off       | pod "web-1" is not scheduled            | pod "web-2" is not scheduled            |
        | off       | current           | DRAConsumableCapacity=off | on        | pod "web-1" is bound to node "worker-1" | pod "web-2" is not scheduled            |
        | off       | current           | DRAConsumableCapacity=off | off       | pod "web-1" is bound to node "worker-1" | pod "web-2" is not scheduled            |

      # On a fresh cluster an API server older than the feature looks like one with the gate off: it drops the
      # fields on create. The scenario below tells the two apart.
      Examples: an API server of 1.33, before the gate existed
        | apiserver | apiserver release | apiserver gates | scheduler | web-1                                   | web-2                        |
        | 1.33      | 1.33              | defaults        | on        | pod "web-1" is bound to node "worker-1" | pod "web-2" is not scheduled |

    # The NIC, both claims and web-1's share of the NIC stored while the API server had the gate on; web-2
    # comes after the restart. A gate-off API server still serves the stored capacity requests, the shareable
    # device and web-1's share; a 1.33 one serves none of them, so web-1 holds the whole NIC (the scheduler's
    # gate stays on).
    Scenario Outline: A share of the NIC stored under the feature, then kube-apiserver <server>: <outcome>
      Given the objects of manifests "shared-nic.yaml, two-claims-four-gig.yaml"
      And a pod "web-1" using claim "four-gig-1"
      When the scheduler runs
      And kube-apiserver restarts as version "<release>" with feature gates "<gates>"
      And a pod "web-2" using claim "four-gig-2" is created
      And the scheduler runs
      Then pod "web-1" is bound to node "worker-1"
      And pod "web-2" <web-2>

      Examples:
        | server                    | release | gates                     | outcome            | web-2                         |
        | DRAConsumableCapacity off | current | DRAConsumableCapacity=off | both share the NIC | is bound to node "worker-1"   |
        | 1.33                      | 1.33    | defaults                  | the first holds it | is not scheduled with reason "Unschedulable" |
