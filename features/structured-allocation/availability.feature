@kep-4381 @structured-allocation
Feature: Which devices are free to take: use by other claims, admin access, taints and shared counters (structured allocation)

  Background:
    Given a node "worker-1"
    And the device class "gpu" selecting driver "gpu.example.com"

  Rule: KEP-4381/DEVICE-IN-USE  A device held by another claim is not allocated again

    Scenario: The second pod gets the second GPU, the third pod none
      Given node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
      And a claim "first" for one "gpu" device
      And a claim "second" for one "gpu" device
      And a claim "third" for one "gpu" device
      And a pod "pod-1" using claim "first"
      And a pod "pod-2" using claim "second"
      And a pod "pod-3" using claim "third"
      When the scheduler runs
      Then claim "first" is allocated device "gpu-0"
      And claim "second" is allocated device "gpu-1"
      And pod "pod-3" is not scheduled
      And claim "third" is not allocated

    Scenario: After a scheduler restart the GPU the first claim holds is still not handed out
      Given node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
      And a claim "first" for one "gpu" device
      And a pod "pod-1" using claim "first"
      When the scheduler runs
      And kube-scheduler restarts
      And claim "second" for one "gpu" device is created
      And a pod "pod-2" using claim "second" is created
      And the scheduler runs
      Then claim "first" is allocated device "gpu-0"
      And claim "second" is allocated device "gpu-1"

    Scenario: One claim never gets the same device for two of its requests
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: twice}
        spec:
          devices:
            requests:
            - name: a
              exactly: {deviceClassName: gpu}
            - name: b
              exactly: {deviceClassName: gpu}
        """
      And a pod "greedy" using claim "twice"
      When the scheduler runs
      Then pod "greedy" is not scheduled

    Scenario: A claim with two requests goes to the node with two free devices, not to one with one
      Given a node "worker-2"
      And node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And node "worker-2" has 2 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: twice}
        spec:
          devices:
            requests:
            - name: a
              exactly: {deviceClassName: gpu}
            - name: b
              exactly: {deviceClassName: gpu}
        """
      And a pod "greedy" using claim "twice"
      When the scheduler runs
      Then pod "greedy" is bound to node "worker-2"

  Rule: KEP-4381/ADMIN-ACCESS  Admin access may share a device in use and holds nothing for others

    Scenario: A monitoring claim gets the GPU a workload holds, and the results say so
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "workload" for one "gpu" device
      And a pod "trainer" using claim "workload"
      And the namespace allows admin access
      And the objects of manifest "monitor-admin-access.yaml"
      And a pod "monitor" using claim "monitor"
      When the scheduler runs
      Then claim "workload" is allocated device "gpu-0"
      And the allocation of claim "monitor" has results:
        """yaml
        - {request: gpu, driver: gpu.example.com, pool: worker-1, device: gpu-0, adminAccess: true}
        """

    Scenario: The monitoring claim takes the GPU first, and the workload allocated after it still gets it
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And the namespace allows admin access
      And the objects of manifest "monitor-admin-access.yaml"
      And a pod "monitor" using claim "monitor"
      When the scheduler runs
      Then claim "monitor" is allocated device "gpu-0"
      When claim "workload" for one "gpu" device is created
      And a pod "trainer" using claim "workload" is created
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "workload" is allocated device "gpu-0"
      And claim "monitor" is allocated device "gpu-0"

    # D-4381-7: within one scheduling attempt every pick is in use for the later requests, admin access too.
    Scenario: In one pod, the GPU a claim took with admin access is not given to the workload claim after it
      Given node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
      And the namespace allows admin access
      And the objects of manifest "monitor-admin-access.yaml"
      And a claim "workload" for one "gpu" device
      And a pod "trainer" using claims "monitor, workload"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "monitor" is allocated device "gpu-0"
      And claim "workload" is allocated device "gpu-1"

    # The gate turned on by default at 1.34 (a 1.33 scheduler left at its defaults has it off) and is GA and
    # locked on from 1.36, so the scheduler turned off is a 1.35 one.
    Scenario Outline: With DRAAdminAccess <setting> in a <release> scheduler an admin request <verdict>
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the namespace allows admin access
      And the objects of manifest "monitor-admin-access.yaml"
      And a pod "monitor" using claim "monitor"
      When the scheduler runs
      Then pod "monitor" <outcome>

      Examples:
        | release | setting       | gates              | verdict      | outcome                     |
        | 1.35    | off           | DRAAdminAccess=off | is an error  | is not scheduled            |
        | 1.33    | off (default) | defaults           | is an error  | is not scheduled            |
        | 1.34    | on (default)  | defaults           | is allocated | is bound to node "worker-1" |

  Rule: KEP-4381/TAINTS  A NoSchedule or NoExecute taint needs a matching toleration

    Background:
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-degraded
            taints:
            - {key: example.com/health, value: degraded, effect: NoSchedule}
          - name: gpu-draining
            taints:
            - {key: example.com/drain, effect: NoExecute}
          - name: gpu-noted
            taints:
            - {key: example.com/note, value: firmware-update-due, effect: None}
        """

    @shape:tolerations:empty @shape:device-taints:one
    Scenario: The tainted GPUs are passed over for the one whose taint has effect None
      Given a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-noted"

    Scenario: A toleration of the taint's key and value but another effect does not admit the GPU
      Given the ResourceClaim:
        """yaml
        metadata: {name: training}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                tolerations:
                - {key: example.com/health, operator: Equal, value: degraded, effect: NoExecute}
        """
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-noted"

    @shape:tolerations:one
    Scenario: A toleration admits the tainted GPU and is copied into the result
      Given the ResourceClaim:
        """yaml
        metadata: {name: burn-in}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                tolerations:
                - {key: example.com/health, operator: Equal, value: degraded, effect: NoSchedule}
        """
      And a pod "burn-in" using claim "burn-in"
      When the scheduler runs
      Then the allocation of claim "burn-in" has results:
        """yaml
        - request: gpu
          driver: gpu.example.com
          pool: worker-1
          device: gpu-degraded
          tolerations:
          - {key: example.com/health, operator: Equal, value: degraded, effect: NoSchedule}
        """

    # Any one of a request's tolerations may admit a taint: here the second of two does.
    @shape:tolerations:several
    Scenario: Of two tolerations, the second admits the degraded GPU
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly:
                deviceClassName: gpu
                count: 2
                tolerations:
                - {key: example.com/other, operator: Exists}
                - {key: example.com/health, operator: Equal, value: degraded, effect: NoSchedule}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then claim "pair" is allocated devices "gpu-degraded, gpu-noted"

    # Every taint of a device must be tolerated: tolerating the first of two does not admit it.
    @shape:device-taints:several
    Scenario: A GPU with two taints, only one of them tolerated, is passed over
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-more-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1-more, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-doubly-tainted
            taints:
            - {key: example.com/health, value: degraded, effect: NoSchedule}
            - {key: example.com/drain, effect: NoExecute}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: three}
        spec:
          devices:
            requests:
            - name: gpus
              exactly:
                deviceClassName: gpu
                count: 3
                tolerations:
                - {key: example.com/health, operator: Equal, value: degraded, effect: NoSchedule}
        """
      And a pod "trainer" using claim "three"
      When the scheduler runs
      Then pod "trainer" is not scheduled

    Scenario Outline: A toleration with only an effect admits the taints of that effect without a value: <effect>
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly:
                deviceClassName: gpu
                count: 2
                tolerations:
                - {effect: <effect>}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then <outcome>

      Examples:
        | effect     | outcome                                                    |
        | NoExecute  | claim "pair" is allocated devices "gpu-draining, gpu-noted" |
        | NoSchedule | claim "pair" is not allocated                              |

    # The gate is on by default from 1.36: a 1.35 scheduler with its defaults ignores taints as one with the gate
    # set off does, and a 1.36 one with its defaults honours them.
    Scenario Outline: With DRADeviceTaints <setting> in a <release> scheduler taints are <judged>
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "<device>"

      Examples:
        | release | setting       | gates               | judged   | device       |
        | current | off           | DRADeviceTaints=off, DRADeviceTaintRules=off | ignored  | gpu-degraded |
        | 1.35    | off (default) | defaults            | ignored  | gpu-degraded |
        | 1.36    | on (default)  | defaults            | honoured | gpu-noted    |

  Rule: KEP-4381/DEVICE-TAINT-RULES  A DeviceTaintRule's taint keeps untolerating requests off the devices it selects

    Background:
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
          - name: gpu-1
        """
      And the DeviceTaintRule:
        """yaml
        metadata: {name: gpu-0-maintenance}
        spec:
          deviceSelector: {driver: gpu.example.com, pool: worker-1, device: gpu-0}
          taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}
        """

    # kube-scheduler v1.36.2 takes DeviceTaintRules at v1beta2 for v1alpha3 ones: it ignores every rule and
    # panics when it syncs a slice while one exists (the rule's upstream_divergences).
    @upstream-differs:taint-rules-ignored-by-scheduler
    Scenario: The device a rule taints is passed over for an untainted one
      Given a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-1"

    # kube-scheduler v1.36.2 takes DeviceTaintRules at v1beta2 for v1alpha3 ones: it ignores every rule and
    # panics when it syncs a slice while one exists (the rule's upstream_divergences).
    @upstream-differs:taint-rules-ignored-by-scheduler
    Scenario: A claim for both devices cannot be allocated while one of them is tainted by a rule
      Given the objects of manifest "two-gpus.yaml"
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled

    # kube-scheduler v1.36.2 takes DeviceTaintRules at v1beta2 for v1alpha3 ones: it ignores every rule and
    # panics when it syncs a slice while one exists (the rule's upstream_divergences).
    @upstream-differs:taint-rules-ignored-by-scheduler
    # The taint lasts as long as the rule: an allocator that caches rules must also forget a deleted one.
    Scenario: Once the rule is deleted, the claim for both devices is allocated
      Given the objects of manifest "two-gpus.yaml"
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      When DeviceTaintRule "gpu-0-maintenance" is deleted
      And the scheduler runs
      Then claim "training" is allocated devices "gpu-0, gpu-1"
      And pod "trainer" is bound to node "worker-1"

    # kube-scheduler v1.36.2 takes DeviceTaintRules at v1beta2 for v1alpha3 ones: it ignores every rule and
    # panics when it syncs a slice while one exists (the rule's upstream_divergences).
    @upstream-differs:taint-rules-ignored-by-scheduler
    Scenario: A toleration of the rule's taint admits the device and is copied into the result
      Given the ResourceClaim:
        """yaml
        metadata: {name: both}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                count: 2
                tolerations:
                - {key: example.com/maintenance, operator: Exists, effect: NoSchedule}
        """
      And a pod "burn-in" using claim "both"
      When the scheduler runs
      Then claim "both" is allocated devices "gpu-0, gpu-1"

    # kube-scheduler v1.36.2 takes DeviceTaintRules at v1beta2 for v1alpha3 ones: it ignores every rule and
    # panics when it syncs a slice while one exists (the rule's upstream_divergences).
    @upstream-differs:taint-rules-ignored-by-scheduler
    Scenario: A rule whose selector names another pool leaves the device of that name here untainted
      Given the DeviceTaintRule:
        """yaml
        metadata: {name: other-pool}
        spec:
          deviceSelector: {pool: worker-2, device: gpu-1}
          taint: {key: example.com/maintenance, effect: NoSchedule}
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-1"

    # The selector's forms: empty (the API says it matches every device), one field, several; a rule for another
    # driver is the row that must leave gpu-1 free. With gpu-0 tainted by the Background's rule, gpu-1 decides.
    # On kube-scheduler v1.36.2 every row differs as upstream's (rules ignored, a panic on a slice sync).
    @upstream-differs:taint-rules-ignored-by-scheduler @shape:rule-selector:empty @shape:rule-selector:driver @shape:rule-selector:driver-pool-device
    Scenario Outline: A second rule selecting <selector> <verdict>
      Given the DeviceTaintRule:
        """yaml
        metadata: {name: second}
        spec:
          deviceSelector: <selector>
          taint: {key: example.com/maintenance, effect: NoSchedule}
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then <outcome>

      Examples:
        | selector                                               | verdict                      | outcome                                     |
        | {}                                                     | taints every device          | pod "trainer" is not scheduled              |
        | {driver: gpu.example.com}                              | taints the driver's devices  | pod "trainer" is not scheduled              |
        | {driver: gpu.example.com, pool: worker-1, device: gpu-1} | taints gpu-1               | pod "trainer" is not scheduled              |
        | {driver: other.example.com}                            | leaves gpu-1 free            | claim "training" is allocated device "gpu-1" |

    # The gate came at 1.35 and turned on by default at 1.37: a 1.36 scheduler left at its defaults has it off.
    Scenario Outline: With DRADeviceTaintRules <setting> in a <release> scheduler the rule is ignored
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the objects of manifest "two-gpus.yaml"
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated devices "gpu-0, gpu-1"

      Examples:
        | release | setting       | gates                   |
        | current | off           | DRADeviceTaintRules=off |
        | 1.36    | off (default) | defaults                |

  Rule: KEP-4381/COUNTERS  Devices that share counters fit only while the counters last

    Background:
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0
            counters:
              memory: {value: 80Gi}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-partitions}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0-whole
            consumesCounters:
            - counterSet: gpu-0
              counters: {memory: {value: 80Gi}}
          - name: gpu-0-half-a
            consumesCounters:
            - counterSet: gpu-0
              counters: {memory: {value: 40Gi}}
          - name: gpu-0-half-b
            consumesCounters:
            - counterSet: gpu-0
              counters: {memory: {value: 40Gi}}
        """

    @shape:counter-sets-consumed:one @shape:counters-consumed:one
    Scenario: Once the whole GPU is allocated no half fits
      Given a claim "whole" for one "gpu" device
      And a pod "big" using claim "whole"
      And a claim "half" for one "gpu" device
      And a pod "small" using claim "half"
      When the scheduler runs
      Then claim "whole" is allocated device "gpu-0-whole"
      And pod "small" is not scheduled
      And claim "half" is not allocated

    Scenario: Two devices from one claim share the counter: the two halves, not whole plus half
      Given the ResourceClaim:
        """yaml
        metadata: {name: two}
        spec:
          devices:
            requests:
            - name: parts
              exactly: {deviceClassName: gpu, count: 2}
        """
      And a pod "trainer" using claim "two"
      When the scheduler runs
      Then claim "two" is allocated devices "gpu-0-half-a, gpu-0-half-b"

    # Shapes walk (issue 39): a device consuming from two counter sets, or two counters of one set, fits only
    # while every counter it consumes lasts. Each part leaves room for a second part in the first counter it
    # names and none in the other, so one part fits and two do not.
    Scenario Outline: A claim for <count> of the parts consuming <what>
      Given the device class "accel" selecting driver "accel.example.com"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-accel-counters}
        spec:
          driver: accel.example.com
          pool: {name: worker-1-accel, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: card
            counters:
              memory: {value: 8Gi}
              engines: {value: "2"}
          - name: link
            counters:
              lanes: {value: "1"}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-accel-parts}
        spec:
          driver: accel.example.com
          pool: {name: worker-1-accel, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: part-0
            consumesCounters: <consumes>
          - name: part-1
            consumesCounters: <consumes>
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: parts}
        spec:
          devices:
            requests:
            - name: accel
              exactly: {deviceClassName: accel, count: <count>}
        """
      And a pod "trainer" using claim "parts"
      When the scheduler runs
      Then <outcome>

      @shape:counter-sets-consumed:several
      Examples: memory of the card and a lane of the link
        | what                        | count | consumes                                                                                                  | outcome                                           |
        | two counter sets            | 1     | [{counterSet: card, counters: {memory: {value: 2Gi}}}, {counterSet: link, counters: {lanes: {value: "1"}}}] | claim "parts" is allocated one of devices "part-0, part-1" |
        | two counter sets            | 2     | [{counterSet: card, counters: {memory: {value: 2Gi}}}, {counterSet: link, counters: {lanes: {value: "1"}}}] | pod "trainer" is not scheduled                    |

      @shape:counters-consumed:several
      Examples: memory and engines of the card
        | what                        | count | consumes                                                                     | outcome                                           |
        | two counters of one set     | 1     | [{counterSet: card, counters: {memory: {value: 2Gi}, engines: {value: "2"}}}] | claim "parts" is allocated one of devices "part-0, part-1" |
        | two counters of one set     | 2     | [{counterSet: card, counters: {memory: {value: 2Gi}, engines: {value: "2"}}}] | pod "trainer" is not scheduled                    |

    # D-4381-13: an admin-access pick is checked against the counters and takes them for the rest of the
    # attempt, as every pick does upstream. Taking the whole GPU with admin access would leave no half for the
    # workload claim, so the search settles on one half each; a core whose admin picks skip the counters gives
    # the monitor the whole GPU and the workload a half.
    @rule:KEP-4381/ADMIN-ACCESS
    Scenario: In one pod, the counters a claim took with admin access are not given to the workload claim after it
      Given the namespace allows admin access
      And the objects of manifest "monitor-admin-access.yaml"
      And a claim "workload" for one "gpu" device
      And a pod "trainer" using claims "monitor, workload"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "monitor" is allocated one of devices "gpu-0-half-a, gpu-0-half-b"
      And claim "workload" is allocated one of devices "gpu-0-half-a, gpu-0-half-b"

    # Upstream 1.36 up to v1.36.2 keeps the counters of a device it rejects for its taint (the rule's
    # upstream_divergences).
    @upstream-differs:taint-rejection-keeps-counters
    Scenario: A device rejected for its taint leaves the counters it would have used free
      Given the ResourceSlice:
        """yaml
        metadata: {name: spare-counters}
        spec:
          driver: gpu.example.com
          pool: {name: spare, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-9
            counters:
              memory: {value: 80Gi}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: spare-devices}
        spec:
          driver: gpu.example.com
          pool: {name: spare, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-9-broken
            attributes: {spare: {bool: true}}
            taints: [{key: example.com/broken, effect: NoSchedule}]
            consumesCounters:
            - counterSet: gpu-9
              counters: {memory: {value: 80Gi}}
          - name: gpu-9-whole
            attributes: {spare: {bool: true}}
            consumesCounters:
            - counterSet: gpu-9
              counters: {memory: {value: 80Gi}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: spare}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: '"spare" in device.attributes["gpu.example.com"]'}
        """
      And a pod "trainer" using claim "spare"
      When the scheduler runs
      Then claim "spare" is allocated device "gpu-9-whole"

    Scenario: A counter set of the same name in a pool of another driver is another counter set
      Given the device class "other" selecting driver "other.example.com"
      And the ResourceSlice:
        """yaml
        metadata: {name: other-counters}
        spec:
          driver: other.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0
            counters:
              memory: {value: 80Gi}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: other-devices}
        spec:
          driver: other.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: accel-0-whole
            consumesCounters:
            - counterSet: gpu-0
              counters: {memory: {value: 80Gi}}
        """
      And a claim "whole" for one "gpu" device
      And a pod "big" using claim "whole"
      And a claim "accel" for one "other" device
      And a pod "second" using claim "accel"
      When the scheduler runs
      Then claim "whole" is allocated device "gpu-0-whole"
      And claim "accel" is allocated device "accel-0-whole"

    # The gate turned on by default at 1.36: a 1.35 scheduler left at its defaults has it off.
    Scenario Outline: Without DRAPartitionableDevices in a <release> scheduler the pool is not understood
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And a claim "half" for one "gpu" device
      And a pod "small" using claim "half"
      When the scheduler runs
      Then pod "small" is not scheduled

      Examples:
        | release | gates                       |
        | current | DRAPartitionableDevices=off |
        | 1.35    | defaults                    |
