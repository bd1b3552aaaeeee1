@kep-5075
Feature: One device, several allocations, until its capacity is used up (KEP-5075 consumable capacity)

  Background:
    Given a node "worker-1"
    And the device class "nic" selecting driver "nic.example.com"
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
            bandwidth:
              value: 10G
              requestPolicy: {default: 1G, validRange: {min: 1G, max: 8G, step: 1G}}
      """
    And the ResourceClaimTemplate:
      """yaml
      metadata: {name: four-gig}
      spec:
        spec:
          devices:
            requests:
            - name: nic
              exactly:
                deviceClassName: nic
                capacity: {requests: {bandwidth: 4G}}
      """

  Rule: KEP-5075/SHARED-DEVICE  A multi-allocatable device serves several claims while its capacity lasts

    @shape:consumers:claims
    Scenario: Two pods share the NIC; a third, which would exceed 10G, waits
      Given the objects of manifest "web-1-and-web-2.yaml"
      And the objects of manifest "web-3.yaml"
      When the scheduler runs
      Then 2 of pods "web-1, web-2, web-3" are bound to node "worker-1" and the other is not scheduled
      And device "eth1" has 2 shares, each with its own shareID

    # The shares the scheduler handed out live only in the claims' status: a restarted scheduler must count
    # them again, or it would hand out the same bandwidth twice.
    Scenario: After a scheduler restart the two shares already allocated still count
      Given the objects of manifest "web-1-and-web-2.yaml"
      When the scheduler runs
      Then pod "web-1" is bound to node "worker-1"
      And pod "web-2" is bound to node "worker-1"
      When kube-scheduler restarts
      And the objects of manifest "web-3.yaml" are created
      And the scheduler runs
      Then pod "web-3" is not scheduled
      And device "eth1" has 2 shares, each with its own shareID

    @shape:consumers:requests-of-one-claim
    Scenario: Two requests of one claim get two shares of the same NIC
      Given the ResourceClaim:
        """yaml
        metadata: {name: dual}
        spec:
          devices:
            requests:
            - name: data
              exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 6G}}}
            - name: control
              exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 2G}}}
        """
      And a pod "router" using claim "dual"
      When the scheduler runs
      Then pod "router" is bound to node "worker-1"
      And the allocation of claim "dual" has a share of device "eth1" consuming:
        """yaml
        - {bandwidth: 6G}
        - {bandwidth: 2G}
        """

    # The rule's own situation with the gate off in kube-scheduler (KEP-5075 version skew): the NIC is an ordinary
    # device, and a claim asking for bandwidth is a scheduling error, so neither pod is bound; a 1.35
    # scheduler left at its defaults runs the stable allocator, which ignores the bandwidth asked for (D-4381-8),
    # so one pod holds the NIC whole and the other waits. Either way the NIC is never shared.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: two pods asking for 4G each do not share the NIC
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the objects of manifest "web-1-and-web-2.yaml"
      When the scheduler runs
      Then <bound> of pods "web-1, web-2" are bound to node "worker-1" and the others are not scheduled

      Examples:
        | scheduler                      | apiserver | release | gates                     | bound |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off | 0     |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  | 1     |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off | 1 |

  Rule: KEP-5075/SHARE-ID  Each allocation carries its own shareID and what it consumes

    Scenario: Three claims, three shareIDs, each with its consumed bandwidth
      Given the ResourceClaim:
        """yaml
        metadata: {name: small}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 2G}}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: large}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 5G}}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: plain}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic}}
        """
      And a pod "app" using claims "small, large, plain"
      When the scheduler runs
      Then pod "app" is bound to node "worker-1"
      And the allocation of claim "small" has a share of device "eth1" consuming:
        """yaml
        {bandwidth: 2G}
        """
      And the allocation of claim "large" has a share of device "eth1" consuming:
        """yaml
        {bandwidth: 5G}
        """
      And device "eth1" has 3 shares, each with its own shareID

    # With the gate off in kube-scheduler the NIC is allocated whole: the result carries no shareID and no
    # consumedCapacity, and no second claim gets the NIC.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: the one allocation of the NIC has no shareID
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And a claim "plain" for one "nic" device
      And a claim "other" for one "nic" device
      And a pod "app" using claim "plain"
      When the scheduler runs
      Then the allocation of claim "plain" holds device "eth1" whole
      When a pod "second" using claim "other" is created
      And the scheduler runs
      Then pod "second" is not scheduled

      Examples:
        | scheduler                      | apiserver | release | gates                     |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off |

  Rule: KEP-5075/RELEASE  A deallocated claim gives its capacity back, once

    # batch comes only once web-1 and web-2 are bound: created together, a real scheduler may place batch
    # first (their claims wait for the resourceclaim controller), and then web-1 is the pod that waits.
    Scenario: The bandwidth web-1 used is free again, and no more than that
      Given the objects of manifest "web-1-and-web-2.yaml"
      When the scheduler runs
      Then pod "web-1" is bound to node "worker-1"
      And pod "web-2" is bound to node "worker-1"
      When the ResourceClaim is created:
        """yaml
        metadata: {name: burst}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 7G}}}}
        """
      And a pod "batch" using claim "burst" is created
      And the scheduler runs
      Then pod "batch" is not scheduled
      When pod "web-1" is deleted
      And the scheduler runs
      Then pod "batch" is not scheduled
      When pod "web-2" is deleted
      And the scheduler runs
      Then pod "batch" is bound to node "worker-1"
      And device "eth1" has 1 shares, each with its own shareID

    # With the gate off in kube-scheduler a plain claim holds the NIC whole; deleting its pod gives the whole NIC
    # back, so the waiting plain claim gets it.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: the NIC held whole is free again once its pod is gone
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And a claim "first" for one "nic" device
      And a pod "app-1" using claim "first"
      When the scheduler runs
      Then pod "app-1" is bound to node "worker-1"
      When claim "second" for one "nic" device is created
      And a pod "app-2" using claim "second" is created
      And the scheduler runs
      Then pod "app-2" is not scheduled
      When pod "app-1" is deleted
      And the scheduler runs
      Then pod "app-2" is bound to node "worker-1"
      And the allocation of claim "second" holds device "eth1" whole

      Examples:
        | scheduler                      | apiserver | release | gates                     |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off |

  Rule: KEP-5075/CEL  Selectors read device.allowMultipleAllocations

    # The scheduler's gate off too: upstream's newer allocators, which the other gates still select, show the
    # device's own value to CEL whatever DRAConsumableCapacity says (D-4381-8: only the stable one shows false).
    Scenario Outline: A request selecting devices whose allowMultipleAllocations is <wanted> (scheduler's DRAConsumableCapacity <capacity>)
      Given kube-scheduler with feature gates "DRAConsumableCapacity=<capacity>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-more-nics}
        spec:
          driver: nic.example.com
          pool: {name: worker-1-more, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: exclusive-0
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: pick}
        spec:
          devices:
            requests:
            - name: nic
              exactly:
                deviceClassName: nic
                selectors:
                - cel: {expression: 'device.allowMultipleAllocations == <wanted>'}
        """
      And a pod "app" using claim "pick"
      When the scheduler runs
      Then claim "pick" is allocated device "<device>"

      Examples:
        | wanted | capacity | device      |
        | true   | on       | eth1        |
        | false  | on       | exclusive-0 |
        | true   | off      | eth1        |
        | false  | off      | exclusive-0 |

    # 1.35 at its defaults runs the stable allocator, whose CEL input has no allowMultipleAllocations: a
    # selector reads it as false (D-4381-8), so no device is selected as shared and either one as not shared.
    Scenario Outline: kube-scheduler 1.35 at its defaults reads allowMultipleAllocations as false (selecting <wanted>)
      Given kube-scheduler version "1.35" with feature gates "defaults"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-more-nics}
        spec:
          driver: nic.example.com
          pool: {name: worker-1-more, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: exclusive-0
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: pick}
        spec:
          devices:
            requests:
            - name: nic
              exactly:
                deviceClassName: nic
                selectors:
                - cel: {expression: 'device.allowMultipleAllocations == <wanted>'}
        """
      And a pod "app" using claim "pick"
      When the scheduler runs
      Then <outcome>

      Examples:
        | wanted | outcome                                                   |
        | true   | pod "app" is not scheduled                                |
        | false  | claim "pick" is allocated one of devices "eth1, exclusive-0" |
