@kep-4381 @structured-allocation
Feature: How the allocator searches: constraints, order and backtracking (structured allocation)

  Background:
    Given a node "worker-1"
    And the device class "gpu" selecting driver "gpu.example.com"
    And the ResourceSlice:
      """yaml
      metadata: {name: worker-1-gpus}
      spec:
        driver: gpu.example.com
        pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
        nodeName: worker-1
        devices:
        - name: gpu-0
          attributes:
            numa: {int: 0}
            gpu.example.com/pcieRoot: {string: pci-a}
        - name: gpu-1
          attributes:
            numa: {int: 1}
            gpu.example.com/pcieRoot: {string: pci-b}
        - name: gpu-2
          attributes:
            numa: {int: 1}
            gpu.example.com/pcieRoot: {string: pci-b}
        - name: gpu-3
      """

  Rule: KEP-4381/MATCH-ATTRIBUTE  Devices under matchAttribute share the attribute's value

    @shape:constraint-requests:empty @shape:attribute:scalar
    Scenario: The allocator backtracks from gpu-0 to the two GPUs on NUMA node 1
      Given the ResourceClaim:
        """yaml
        metadata: {name: same-numa}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 2}
            constraints:
            - matchAttribute: gpu.example.com/numa
        """
      And a pod "trainer" using claim "same-numa"
      When the scheduler runs
      Then claim "same-numa" is allocated devices "gpu-1, gpu-2"

    # A constraint naming no requests binds every request of the claim (the API: an empty list means all of
    # them), so two requests of one GPU each land together on the one NUMA node with two GPUs.
    @shape:constraint-requests:empty
    Scenario: A constraint naming no requests binds every request of the claim
      Given the ResourceClaim:
        """yaml
        metadata: {name: two-requests}
        spec:
          devices:
            requests:
            - name: first
              exactly: {deviceClassName: gpu}
            - name: second
              exactly: {deviceClassName: gpu}
            constraints:
            - matchAttribute: gpu.example.com/numa
        """
      And a pod "trainer" using claim "two-requests"
      When the scheduler runs
      Then claim "two-requests" is allocated devices "gpu-1, gpu-2"

    @shape:constraint-requests:one
    Scenario: The constraint binds only the requests it names
      Given the ResourceClaim:
        """yaml
        metadata: {name: partial}
        spec:
          devices:
            requests:
            - name: any
              exactly: {deviceClassName: gpu}
            - name: pair
              exactly: {deviceClassName: gpu, count: 2}
            constraints:
            - matchAttribute: gpu.example.com/pcieRoot
              requests: [pair]
        """
      And a pod "trainer" using claim "partial"
      When the scheduler runs
      Then the allocation of claim "partial" has results:
        """yaml
        - {request: any, driver: gpu.example.com, pool: worker-1, device: gpu-0}
        - {request: pair, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        - {request: pair, driver: gpu.example.com, pool: worker-1, device: gpu-2}
        """

    Scenario: A device without the attribute is never chosen under the constraint
      Given the ResourceClaim:
        """yaml
        metadata: {name: three}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 3}
            constraints:
            - matchAttribute: gpu.example.com/numa
        """
      And a pod "trainer" using claim "three"
      When the scheduler runs
      Then pod "trainer" is not scheduled

    # Shapes walk (issue 39): a constraint naming two of three requests binds both of them, and only them. The
    # first fit (gpu-0 for a) leaves b no GPU on NUMA node 0, so a and b must take the two on node 1; c is free.
    @shape:constraint-requests:several
    Scenario: A constraint naming two of three requests binds both, and the third is free
      Given the ResourceClaim:
        """yaml
        metadata: {name: three-requests}
        spec:
          devices:
            requests:
            - {name: a, exactly: {deviceClassName: gpu}}
            - {name: b, exactly: {deviceClassName: gpu}}
            - {name: c, exactly: {deviceClassName: gpu}}
            constraints:
            - matchAttribute: gpu.example.com/numa
              requests: [a, b]
        """
      And a pod "trainer" using claim "three-requests"
      When the scheduler runs
      Then claim "three-requests" is allocated devices "gpu-1, gpu-2" for requests "a, b"

  Rule: KEP-4381/DISTINCT-ATTRIBUTE  Devices under distinctAttribute all differ in the attribute

    Scenario: Two GPUs on different PCIe roots
      Given the objects of manifest "spread-two-gpus.yaml"
      And a pod "trainer" using claim "spread"
      When the scheduler runs
      Then claim "spread" is allocated devices "gpu-0, gpu-1"

    @shape:constraint-requests:empty @shape:attribute:scalar
    Scenario: Three GPUs on distinct PCIe roots are not there, although three GPUs are
      Given the ResourceClaim:
        """yaml
        metadata: {name: spread}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 3}
            constraints:
            - distinctAttribute: gpu.example.com/pcieRoot
        """
      And a pod "trainer" using claim "spread"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "spread" is not allocated

    # Shapes walk (issue 39): a constraint naming one request binds that request's own devices to each other;
    # three GPUs for it need three PCIe roots, though the four GPUs would serve both requests without it.
    @shape:constraint-requests:one
    Scenario: A distinctAttribute constraint naming one request of three GPUs needs three PCIe roots
      Given the ResourceClaim:
        """yaml
        metadata: {name: spread-one}
        spec:
          devices:
            requests:
            - {name: other, exactly: {deviceClassName: gpu}}
            - {name: trio, exactly: {deviceClassName: gpu, count: 3}}
            constraints:
            - distinctAttribute: gpu.example.com/pcieRoot
              requests: [trio]
        """
      And a pod "trainer" using claim "spread-one"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "spread-one" is not allocated

    # Shapes walk (issue 39): a constraint naming several requests binds each of them. Three requests of one GPU
    # each, all named, need three PCIe roots; there are two.
    @shape:constraint-requests:several
    Scenario: A distinctAttribute constraint naming each of three requests needs three PCIe roots
      Given the ResourceClaim:
        """yaml
        metadata: {name: spread-requests}
        spec:
          devices:
            requests:
            - {name: a, exactly: {deviceClassName: gpu}}
            - {name: b, exactly: {deviceClassName: gpu}}
            - {name: c, exactly: {deviceClassName: gpu}}
            constraints:
            - distinctAttribute: gpu.example.com/pcieRoot
              requests: [a, b, c]
        """
      And a pod "trainer" using claim "spread-requests"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "spread-requests" is not allocated

    Scenario Outline: kube-scheduler with <gates>: <what>
      Given kube-scheduler with feature gates "<gates>"
      And the objects of manifest "spread-two-gpus.yaml"
      And a pod "trainer" using claim "spread"
      When the scheduler runs
      Then <outcome>

      Examples:
        | gates                                                      | what                             | outcome                                                        |
        | DRAConsumableCapacity=off                                  | a newer allocator still enforces | claim "spread" is allocated devices "gpu-0, gpu-1"             |
        | DRAConsumableCapacity=off, DRADeviceBindingConditions=off  | only the stable allocator is left | pod "trainer" is not scheduled                           |

    @shape:attribute:list @rule:KEP-4381/MATCH-ATTRIBUTE
    Scenario Outline: Over a list-type attribute, <constraint> compares the lists as sets
      Given a cluster with feature gates "DRAListTypeAttributes" on
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-cpus}
        spec:
          driver: cpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: ccx-0
            attributes: {numaNodes: {ints: [0]}}
          - name: ccx-1
            attributes: {numaNodes: {ints: [0, 1]}}
          - name: ccx-2
            attributes: {numaNodes: {ints: [1]}}
        """
      And the device class "cpu" selecting driver "cpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: cores}
        spec:
          devices:
            requests:
            - name: ccx
              exactly: {deviceClassName: cpu, count: <count>}
            constraints:
            - <constraint>: cpu.example.com/numaNodes
        """
      And a pod "app" using claim "cores"
      When the scheduler runs
      Then <outcome>

      Examples:
        | constraint        | count | outcome                                              |
        | matchAttribute    | 3     | pod "app" is not scheduled                           |

      # kube-scheduler up to v1.36.2 does not hand DRAListTypeAttributes to its allocator, which then compares
      # scalars only and refuses a second device with a list value (the rule's upstream_divergences).
      @upstream-differs:list-attributes-not-passed-to-allocator
      Examples: two devices whose lists overlap, or are disjoint
        | constraint        | count | outcome                                              |
        | matchAttribute    | 2     | claim "cores" is allocated devices "ccx-0, ccx-1"    |
        | distinctAttribute | 2     | claim "cores" is allocated devices "ccx-0, ccx-2"    |

    # D-4381-15 and D-4381-10: kube-scheduler without the gate compares scalars only; a list value after the
    # first device breaks either constraint. The rows: each list type the API has, and a scalar, which both
    # constraints still compare.
    Scenario Outline: With DRAListTypeAttributes off in kube-scheduler, <constraint> over <first> and <second>: <verdict>
      Given a cluster with feature gates "DRAListTypeAttributes" on
      And kube-scheduler with feature gates "DRAListTypeAttributes=off"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-cpus}
        spec:
          driver: cpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: ccx-0
            attributes: {level: <first>}
          - name: ccx-2
            attributes: {level: <second>}
        """
      And the device class "cpu" selecting driver "cpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: cores}
        spec:
          devices:
            requests:
            - name: ccx
              exactly: {deviceClassName: cpu, count: 2}
            constraints:
            - <constraint>: cpu.example.com/level
        """
      And a pod "app" using claim "cores"
      When the scheduler runs
      Then <outcome>

      Examples:
        | constraint        | first                | second               | verdict            | outcome                                           |
        | distinctAttribute | {ints: [0]}          | {ints: [1]}          | refused            | pod "app" is not scheduled                        |
        | distinctAttribute | {strings: [a]}       | {strings: [b]}       | refused            | pod "app" is not scheduled                        |
        | distinctAttribute | {versions: [1.0.0]}  | {versions: [2.0.0]}  | refused            | pod "app" is not scheduled                        |
        | distinctAttribute | {int: 0}             | {int: 1}             | allocated          | claim "cores" is allocated devices "ccx-0, ccx-2" |
        | matchAttribute    | {versions: [1.0.0]}  | {versions: [1.0.0]}  | refused            | pod "app" is not scheduled                        |
        | matchAttribute    | {version: 1.0.0}     | {version: 1.0.0}     | allocated          | claim "cores" is allocated devices "ccx-0, ccx-2" |

  Rule: KEP-4381/SEARCH-ORDER  First fit, depth first: pools by driver and name, slices by name, devices in order

    Scenario: Pools are tried by driver and pool name, slices by name, whatever order they were published in
      Given the ResourceSlice:
        """yaml
        metadata: {name: zz-published-first}
        spec:
          driver: gpu.example.com
          pool: {name: b-pool, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: b-late
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: aa-published-second}
        spec:
          driver: gpu.example.com
          pool: {name: b-pool, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: b-early
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: a-pool}
        spec:
          driver: gpu.example.com
          pool: {name: a-pool, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: a-only
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: many}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 4}
        """
      And a pod "trainer" using claim "many"
      When the scheduler runs
      Then the allocation of claim "many" has results:
        """yaml
        - {request: gpus, driver: gpu.example.com, pool: a-pool, device: a-only}
        - {request: gpus, driver: gpu.example.com, pool: b-pool, device: b-early}
        - {request: gpus, driver: gpu.example.com, pool: b-pool, device: b-late}
        - {request: gpus, driver: gpu.example.com, pool: worker-1, device: gpu-0}
        """

    Scenario: The claims of one pod are allocated together: the first backs off gpu-0 so the second can have it
      Given the ResourceClaim:
        """yaml
        metadata: {name: any-gpu}
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: gpu}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: numa-0-gpu}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'has(device.attributes["gpu.example.com"].numa) && device.attributes["gpu.example.com"].numa == 0'}
        """
      And a pod "trainer" using claims "any-gpu, numa-0-gpu"
      When the scheduler runs
      Then claim "any-gpu" is allocated device "gpu-1"
      And claim "numa-0-gpu" is allocated device "gpu-0"
