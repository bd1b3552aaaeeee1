@kep-5075
Feature: How much an allocation consumes: rounding, policies, defaults (KEP-5075 consumable capacity)

  Background:
    Given a node "worker-1"
    And the device class "gpu" selecting driver "gpu.example.com"

  Rule: KEP-5075/ROUND-UP  Requests round up to the step or the next valid value before the check

    Scenario Outline: <requested> of memory on a GPU whose policy is <policy>
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi, requestPolicy: <policy>}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: <requested>}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then the allocation of claim "job" has a share of device "gpu-0" consuming:
        """yaml
        {memory: <consumed>}
        """

      Examples:
        | policy                                                     | requested | consumed |
        | {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}          | 1500Mi    | 2Gi      |
        | {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}          | 2Gi       | 2Gi      |
        | {default: 4Gi, validRange: {min: 4Gi, step: 2Gi}}          | 1Gi       | 4Gi      |
        | {default: 4Gi, validRange: {min: 4Gi, step: 2Gi}}          | 5Gi       | 6Gi      |
        | {default: 5Gi, validValues: [5Gi, 10Gi, 20Gi]}             | 6Gi       | 10Gi     |
        | {default: 5Gi, validValues: [5Gi, 10Gi, 20Gi]}             | 20Gi      | 20Gi     |

    Scenario: Rounded up, the second 1500Mi share no longer fits in 3Gi
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 3Gi, requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}}
        """
      And the ResourceClaimTemplate:
        """yaml
        metadata: {name: slice}
        spec:
          spec:
            devices:
              requests:
              - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 1500Mi}}}}
        """
      And the Pod:
        """yaml
        metadata: {name: first}
        spec:
          containers: [{name: main, image: registry.example/cuda:12}]
          resourceClaims: [{name: gpu, resourceClaimTemplateName: slice}]
        """
      And the Pod:
        """yaml
        metadata: {name: second}
        spec:
          containers: [{name: main, image: registry.example/cuda:12}]
          resourceClaims: [{name: gpu, resourceClaimTemplateName: slice}]
        """
      When the scheduler runs
      Then pod "first" is bound to node "worker-1"
      And pod "second" is not scheduled

    # With the gate off in kube-scheduler a claim asking for capacity is a scheduling error, so nothing is rounded
    # or consumed; a 1.35 scheduler at its defaults runs the stable allocator, which ignores the amount asked for
    # (D-4381-8) and allocates the GPU whole.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: 1500Mi of memory on a GPU with a 1Gi step is not rounded into a share
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi, requestPolicy: {default: 1Gi, validRange: {min: 1Gi, step: 1Gi}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 1500Mi}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then <outcome>

      Examples:
        | scheduler                      | apiserver | release | gates                     | outcome   |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off | pod "trainer" is not scheduled                            |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  | the allocation of claim "job" holds device "gpu-0" whole |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off | the allocation of claim "job" holds device "gpu-0" whole |

  Rule: KEP-5075/POLICY-REFUSES  No allocation when the rounded amount is beyond the policy

    # With the gate off in kube-scheduler every amount is refused, a scheduling error; a 1.35 scheduler at its
    # defaults ignores the amount and the policy alike (D-4381-8), and with the gate off in kube-apiserver too the
    # amount and the policy are dropped when written, so what is beyond the policy is allocated.
    Scenario Outline: <requested> under <policy> (kube-scheduler <scheduler>)
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi, requestPolicy: <policy>}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: <requested>}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then <outcome>

      Examples:
        | scheduler | apiserver | release | gates    | policy                                                      | requested | outcome                                   |
        | default   | defaults | current | defaults | {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}} | 8Gi       | pod "trainer" is bound to node "worker-1" |
        | default   | defaults | current | defaults | {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}} | 7200Mi    | pod "trainer" is bound to node "worker-1" |
        | default   | defaults | current | defaults | {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}} | 8200Mi    | pod "trainer" is not scheduled            |
        | default   | defaults | current | defaults | {default: 5Gi, validValues: [5Gi, 10Gi]}                    | 10Gi      | pod "trainer" is bound to node "worker-1" |
        | default   | defaults | current | defaults | {default: 5Gi, validValues: [5Gi, 10Gi]}                    | 11Gi      | pod "trainer" is not scheduled            |

      Examples: the gate off, or a release before it was on by default
        | scheduler                      | apiserver                 | release | gates                     | policy                                                      | requested | outcome                                   |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on  | current | DRAConsumableCapacity=off | {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}} | 8Gi       | pod "trainer" is not scheduled            |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on  | current | DRAConsumableCapacity=off | {default: 5Gi, validValues: [5Gi, 10Gi]}                    | 10Gi      | pod "trainer" is not scheduled            |
        | 1.35 at its defaults           | DRAConsumableCapacity=on  | 1.35    | defaults                  | {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}} | 8200Mi    | pod "trainer" is bound to node "worker-1" |
        | 1.35 at its defaults           | DRAConsumableCapacity=on  | 1.35    | defaults                  | {default: 5Gi, validValues: [5Gi, 10Gi]}                    | 11Gi      | pod "trainer" is bound to node "worker-1" |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off | {default: 1Gi, validRange: {min: 1Gi, max: 8Gi, step: 1Gi}} | 8200Mi    | pod "trainer" is bound to node "worker-1" |

  Rule: KEP-5075/DEFAULT-CONSUMPTION  Capacities without an amount take the default, or everything

    Scenario: A request naming memory only takes the default of cores, and all of the policy-less copy engines
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi, requestPolicy: {default: 4Gi, validRange: {min: 4Gi, step: 4Gi}}}
              cores: {value: "100", requestPolicy: {default: "10", validValues: ["10", "50", "100"]}}
              copyEngines: {value: "2"}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 8Gi}}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: second}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 8Gi}}}}
        """
      And a pod "trainer" using claim "job"
      And a pod "other" using claim "second"
      When the scheduler runs
      Then the allocation of claim "job" has a share of device "gpu-0" consuming:
        """yaml
        {memory: 8Gi, cores: "10", copyEngines: "2"}
        """
      And pod "other" is not scheduled

    # With the gate off in kube-scheduler no default is consumed: a claim asking for no amount gets the GPU
    # whole, with no consumedCapacity, and a second such claim waits.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: a request naming no amount takes the GPU whole, not its defaults
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi, requestPolicy: {default: 4Gi, validRange: {min: 4Gi, step: 4Gi}}}
              cores: {value: "100", requestPolicy: {default: "10", validValues: ["10", "50", "100"]}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then the allocation of claim "job" holds device "gpu-0" whole
      When claim "second" for one "gpu" device is created
      And a pod "other" using claim "second" is created
      And the scheduler runs
      Then pod "other" is not scheduled

      Examples:
        | scheduler                      | apiserver | release | gates                     |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off |

  Rule: KEP-5075/MISSING-CAPACITY  A device lacking a requested capacity is skipped

    Scenario: The request for cores skips the GPU without cores
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi}
          - name: gpu-1
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi}
              cores: {value: "100"}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {cores: "20", memory: 10Gi}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then the allocation of claim "job" has a share of device "gpu-1" consuming:
        """yaml
        {memory: 10Gi, cores: "20"}
        """

    # The API's QualifiedName puts a name without a domain in the driver's domain.
    @upstream-differs:capacity-names-compared-as-written
    Scenario Outline: A capacity is found whether the request or the device names it with the driver's domain
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              <published>: {value: 40Gi}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {<requested>: 10Gi}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then claim "job" is allocated device "gpu-0"

      Examples:
        | form                          | published              | requested              |
        | the request qualifies it      | memory                 | gpu.example.com/memory |
        | the device qualifies it       | gpu.example.com/memory | memory                 |

    # With the gate off in kube-scheduler the request for cores is a scheduling error, not a reason to pass
    # gpu-0 over; a 1.35 scheduler at its defaults ignores the amounts, so either GPU will do.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: a request for cores on two GPUs, one without cores
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi}
          - name: gpu-1
            allowMultipleAllocations: true
            capacity:
              memory: {value: 40Gi}
              cores: {value: "100"}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {cores: "20", memory: 10Gi}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then <outcome>

      Examples:
        | scheduler                      | apiserver | release | gates                     | outcome   |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off | pod "trainer" is not scheduled                       |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  | claim "job" is allocated one of devices "gpu-0, gpu-1" |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off | claim "job" is allocated one of devices "gpu-0, gpu-1" |

  Rule: KEP-5075/ORDINARY-DEVICES  Capacity requests also choose among devices allocated whole

    Scenario: 48Gi of memory: the 40Gi GPU is passed over for the 80Gi one, allocated whole
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            capacity: {memory: {value: 40Gi}}
          - name: gpu-1
            capacity: {memory: {value: 80Gi}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 48Gi}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then claim "job" is allocated device "gpu-1"
      And the allocation of claim "job" holds device "gpu-1" whole

    # With the gate off in kube-scheduler the 48Gi asked for is a scheduling error rather than a reason to pass
    # the 40Gi GPU over; a 1.35 scheduler at its defaults ignores it, so either GPU will do.
    # With the gate off in kube-apiserver as well, the capacity fields are dropped when written
    # (KEP-5075/VERSION-SKEW): the claim is an ordinary request, the device an ordinary one.
    Scenario Outline: kube-scheduler <scheduler>: 48Gi of memory asked of a 40Gi and an 80Gi GPU
      Given kube-apiserver with feature gates "<apiserver>"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
            capacity: {memory: {value: 40Gi}}
          - name: gpu-1
            capacity: {memory: {value: 80Gi}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - {name: gpu, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 48Gi}}}}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then <outcome>

      Examples:
        | scheduler                      | apiserver | release | gates                     | outcome   |
        | with DRAConsumableCapacity off | DRAConsumableCapacity=on | current | DRAConsumableCapacity=off | pod "trainer" is not scheduled                       |
        | 1.35 at its defaults           | DRAConsumableCapacity=on | 1.35    | defaults                  | claim "job" is allocated one of devices "gpu-0, gpu-1" |
        | and kube-apiserver with DRAConsumableCapacity off | DRAConsumableCapacity=off | current | DRAConsumableCapacity=off | claim "job" is allocated one of devices "gpu-0, gpu-1" |

  Rule: KEP-5075/ADMIN-ACCESS  Admin access asks for capacity like any allocation

    Scenario Outline: A monitoring claim with admin access <amount> beside a 6G share (<claims>)
      Given the namespace allows admin access
      And the device class "nic" selecting driver "nic.example.com"
      And the objects of manifest "shared-nic.yaml"
      And the ResourceClaim:
        """yaml
        metadata: {name: workload}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, capacity: {requests: {bandwidth: 6G}}}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: monitor}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, adminAccess: true<capacity>}}
        """
      And a pod "app" using claims "<claims>"
      When the scheduler runs
      Then <outcome>

      # Both orders: an allocator that admits the monitor against the shares before it but forgets its amount for
      # the shares after it passes the first order only.
      Examples:
        | amount             | claims            | capacity                                  | outcome                                                      |
        | asking for nothing | workload, monitor |                                           | pod "app" is not scheduled                                   |
        | asking for 4G      | workload, monitor | , capacity: {requests: {bandwidth: 4G}}   | pod "app" is bound to node "worker-1"                        |
        | asking for 5G      | workload, monitor | , capacity: {requests: {bandwidth: 5G}}   | pod "app" is not scheduled                                   |
        | asking for nothing | monitor, workload |                                           | pod "app" is not scheduled                                   |
        | asking for 4G      | monitor, workload | , capacity: {requests: {bandwidth: 4G}}   | pod "app" is bound to node "worker-1"                        |
        | asking for 5G      | monitor, workload | , capacity: {requests: {bandwidth: 5G}}   | pod "app" is not scheduled                                   |

    # With DRAConsumableCapacity off in kube-scheduler the NIC is an ordinary device: a plain workload claim holds
    # it whole, and admin access, which ignores whether a device is in use, gets it beside the workload, whole
    # too. With DRAAdminAccess off in kube-scheduler (as in 1.33 at its defaults) the admin request is a scheduling
    # error (KEP-4381/ADMIN-ACCESS).
    Scenario Outline: kube-scheduler <scheduler>: a monitoring claim with admin access beside a plain workload claim
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the namespace allows admin access
      And the device class "nic" selecting driver "nic.example.com"
      And the objects of manifest "shared-nic.yaml"
      And a claim "workload" for one "nic" device
      And the ResourceClaim:
        """yaml
        metadata: {name: monitor}
        spec:
          devices:
            requests:
            - {name: nic, exactly: {deviceClassName: nic, adminAccess: true}}
        """
      And a pod "app" using claims "workload, monitor"
      When the scheduler runs
      Then <pod>
      And <monitor>

      Examples:
        | scheduler                      | release | gates                     | pod                                   | monitor                                              |
        | with DRAConsumableCapacity off | current | DRAConsumableCapacity=off | pod "app" is bound to node "worker-1" | the allocation of claim "monitor" holds device "eth1" whole |
        | 1.35 at its defaults           | 1.35    | defaults                  | pod "app" is bound to node "worker-1" | the allocation of claim "monitor" holds device "eth1" whole |
        | with DRAAdminAccess off        | 1.35    | DRAAdminAccess=off        | pod "app" is not scheduled            | claim "monitor" is not allocated                     |
        | 1.33 at its defaults           | 1.33    | defaults                  | pod "app" is not scheduled            | claim "monitor" is not allocated                     |

  Rule: KEP-5075/COUNTERS-ONCE  A shared device takes its counters with its first allocation only

    Scenario: Three shares of a partition take its 20Gi of counters once, leaving room for another partition
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0-mem
            counters: {memory: {value: 40Gi}}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-partitions}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0-shared
            allowMultipleAllocations: true
            capacity: {memory: {value: 20Gi}}
            consumesCounters: [{counterSet: gpu-0-mem, counters: {memory: {value: 20Gi}}}]
          - name: gpu-0-half
            consumesCounters: [{counterSet: gpu-0-mem, counters: {memory: {value: 20Gi}}}]
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: team}
        spec:
          devices:
            requests:
            - {name: a, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 5Gi}}}}
            - {name: b, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 5Gi}}}}
            - {name: c, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 5Gi}}}}
            - name: whole
              exactly:
                deviceClassName: gpu
                selectors: [{cel: {expression: '!device.allowMultipleAllocations'}}]
        """
      And a pod "team" using claim "team"
      When the scheduler runs
      Then pod "team" is bound to node "worker-1"
      And the allocation of claim "team" has a share of device "gpu-0-shared" consuming:
        """yaml
        - {memory: 5Gi}
        - {memory: 5Gi}
        - {memory: 5Gi}
        """
      And the allocation of claim "team" holds device "gpu-0-half" whole

    # D-4381-16: a shared device without capacities gives its share no consumedCapacity; that share still took
    # the device's 6Gi of counters, so the next claim's share takes none (6Gi + 6Gi would not fit in 8Gi). A
    # scheduler that counts only shares recording consumedCapacity charges the counters again and leaves the
    # second pod pending.
    @upstream-differs:held-share-counters-charged-again
    Scenario: A share recording no consumedCapacity still took the counters, so the next claim's share takes none
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0-mem
            counters: {memory: {value: 8Gi}}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-partitions}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0-shared
            allowMultipleAllocations: true
            consumesCounters: [{counterSet: gpu-0-mem, counters: {memory: {value: 6Gi}}}]
        """
      And a claim "first" for one "gpu" device
      And a pod "first" using claim "first"
      When the scheduler runs
      Then claim "first" is allocated device "gpu-0-shared"
      When claim "second" for one "gpu" device is created
      And a pod "second" using claim "second" is created
      And the scheduler runs
      Then claim "second" is allocated device "gpu-0-shared"
      And pod "second" is bound to node "worker-1"

    # The other side of "once": a share does take the counters. A scheduler that charges shares nothing passes
    # the scenario above (its 20Gi partition fits either way) and puts a 30Gi partition beside the share here.
    Scenario: A share of a partition takes its 20Gi of counters, so a 30Gi partition no longer fits beside it
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0-mem
            counters: {memory: {value: 40Gi}}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-partitions}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0-shared
            allowMultipleAllocations: true
            capacity: {memory: {value: 20Gi}}
            consumesCounters: [{counterSet: gpu-0-mem, counters: {memory: {value: 20Gi}}}]
          - name: gpu-0-large
            consumesCounters: [{counterSet: gpu-0-mem, counters: {memory: {value: 30Gi}}}]
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: team}
        spec:
          devices:
            requests:
            - {name: a, exactly: {deviceClassName: gpu, capacity: {requests: {memory: 5Gi}}}}
            - name: whole
              exactly:
                deviceClassName: gpu
                selectors: [{cel: {expression: '!device.allowMultipleAllocations'}}]
        """
      And a pod "team" using claim "team"
      When the scheduler runs
      Then pod "team" is not scheduled
      And claim "team" is not allocated

    # With DRAConsumableCapacity off in kube-scheduler the shared partition is an ordinary device: a plain claim
    # takes it whole with its 20Gi of counters, and a second plain claim for it waits although the counters would
    # have room for it. With DRAPartitionableDevices off (or in 1.35 at its defaults, where both were off)
    # kube-scheduler does not understand the pool and allocates neither (KEP-4381/COUNTERS).
    Scenario Outline: kube-scheduler <scheduler>: two plain claims for the shared partition of a GPU
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0-mem
            counters: {memory: {value: 40Gi}}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-partitions}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0-shared
            allowMultipleAllocations: true
            capacity: {memory: {value: 20Gi}}
            consumesCounters: [{counterSet: gpu-0-mem, counters: {memory: {value: 20Gi}}}]
        """
      And a claim "first" for one "gpu" device
      And a pod "first" using claim "first"
      When the scheduler runs
      Then <first>
      When claim "second" for one "gpu" device is created
      And a pod "second" using claim "second" is created
      And the scheduler runs
      Then pod "second" is not scheduled

      Examples:
        | scheduler                        | release | gates                       | first                                                          |
        | with DRAConsumableCapacity off   | current | DRAConsumableCapacity=off   | the allocation of claim "first" holds device "gpu-0-shared" whole |
        | with DRAPartitionableDevices off | current | DRAPartitionableDevices=off | pod "first" is not scheduled                                   |
        | 1.35 at its defaults             | 1.35    | defaults                    | pod "first" is not scheduled                                   |
