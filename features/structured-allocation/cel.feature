@kep-4381 @structured-allocation
Feature: CEL selectors: the device environment and what goes wrong (structured allocation)

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
            model: {string: A100}
            driverVersion: {version: 1.2.3}
            example.com/firmware: {version: 2.0.0-rc.1}
          capacity:
            memory: {value: 40Gi}
      """

  Rule: KEP-4381/CEL-ENVIRONMENT  Selectors see driver, attributes and capacity, with quantity() and semver()

    @shape:attribute:scalar @shape:attribute-domain:empty
    Scenario Outline: <what> selects the device
      Given the ResourceClaim:
        """yaml
        metadata: {name: probe}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: '<expression>'}
        """
      And a pod "trainer" using claim "probe"
      When the scheduler runs
      Then claim "probe" is allocated device "gpu-0"

      Examples:
        | what                                   | expression                                                                                   |
        | an unqualified attribute               | device.attributes["gpu.example.com"].model == "A100"                                         |
        | a quantity comparison                  | device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("32Gi"))                    |
        | an exact quantity in other units       | device.capacity["gpu.example.com"].memory.compareTo(quantity("40960Mi")) == 0                |
        | a version's major number               | device.attributes["gpu.example.com"].driverVersion.major() == 1                              |
        | a pre-release ordered before release   | device.attributes["example.com"].firmware.isLessThan(semver("2.0.0"))                        |
        | an absent domain read as an empty map  | !has(device.attributes["other.example.com"].model)                                           |
        | an absent domain has no names in it    | !("model" in device.attributes["other.example.com"]) && !("x" in device.capacity["other.example.com"]) |

    Scenario Outline: includes() on a scalar attribute, with list-type attributes off: <what>
      Given a cluster with feature gates "DRAListTypeAttributes" off
      And the ResourceClaim:
        """yaml
        metadata: {name: probe}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model.includes("<model>")'}
        """
      And a pod "trainer" using claim "probe"
      When the scheduler runs
      Then <outcome>

      Examples:
        | what                        | model | outcome                              |
        | the same value is included  | A100  | claim "probe" is allocated device "gpu-0" |
        | another value is not        | H100  | claim "probe" is not allocated       |

    # Shapes walk (issue 39): over a list-type attribute, includes() looks at every item, not the first one only.
    @shape:attribute:list
    Scenario Outline: includes() on a list attribute, with list-type attributes on: <what>
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
        metadata: {name: near}
        spec:
          devices:
            requests:
            - name: ccx
              exactly:
                deviceClassName: cpu
                count: 2
                selectors:
                - cel: {expression: 'device.attributes["cpu.example.com"].numaNodes.includes(<node>)'}
        """
      And a pod "app" using claim "near"
      When the scheduler runs
      Then <outcome>

      Examples:
        | what                              | node | outcome                                         |
        | a later item counts               | 1    | claim "near" is allocated devices "ccx-1, ccx-2" |
        | the first item counts             | 0    | claim "near" is allocated devices "ccx-0, ccx-1" |
        | a value in no list is not included | 2    | pod "app" is not scheduled                      |

  Rule: KEP-4381/CEL-ERRORS  A broken or runaway selector stops allocation with an error, never a hang

    # A selector that could run past the cost budget is refused when the claim is written (DRA-API/CEL-COST), so
    # a runaway reaches the allocator only from objects stored earlier (draconform allocate): a scenario cannot
    # create one. The rows are the evaluation errors a claim upstream accepts can meet.

    Scenario Outline: <what> is an error, not a mismatch
      Given the ResourceClaim:
        """yaml
        metadata: {name: probe}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: '<expression>'}
        """
      And a pod "trainer" using claim "probe"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "SchedulerError"
      And claim "probe" is not allocated

      Examples:
        | what                         | expression                                                  |
        | an unknown attribute         | device.attributes["gpu.example.com"].memory > 1             |
        | a result that is not a bool  | device.attributes["gpu.example.com"].model                  |
        | a division by zero           | device.attributes["gpu.example.com"].model.size() / 0 > 1 |
        | an integer overflow          | 9223372036854775807 + device.attributes["gpu.example.com"].model.size() > 0 |

    # D-4381-11: a Filter error on any node the cycle visits fails the cycle, even where another node fits.
    Scenario: An error on one node fails the pod although another node has a matching device
      Given a node "worker-2"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-2-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-2, generation: 1, resourceSliceCount: 1}
          nodeName: worker-2
          devices:
          - name: gpu-0
            attributes:
              model: {string: A100}
              example.com/memoryClass: {string: hbm3}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: probe}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["example.com"].memoryClass == "hbm3"'}
        """
      And a pod "trainer" using claim "probe"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "SchedulerError"
      And claim "probe" is not allocated
