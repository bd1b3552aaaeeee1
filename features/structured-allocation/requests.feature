@kep-4381 @structured-allocation
Feature: What a request asks for: selectors, counts, All, prioritized alternatives (structured allocation)

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
            model: {string: A10}
          capacity:
            memory: {value: 24Gi}
        - name: gpu-1
          attributes:
            model: {string: A100}
          capacity:
            memory: {value: 40Gi}
        - name: gpu-2
          attributes:
            model: {string: A100}
          capacity:
            memory: {value: 80Gi}
      """
    And the ResourceSlice:
      """yaml
      metadata: {name: worker-1-nics}
      spec:
        driver: nic.example.com
        pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
        nodeName: worker-1
        devices:
        - name: nic-0
      """

  Rule: KEP-4381/SELECTORS  A device must satisfy the class's selectors and the request's

    @shape:class-selectors:one @shape:request-selectors:one
    Scenario: The request's selector narrows the class to the 80Gi GPU
      Given the ResourceClaim:
        """yaml
        metadata: {name: big}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0'}
        """
      And a pod "trainer" using claim "big"
      When the scheduler runs
      Then claim "big" is allocated device "gpu-2"

    Scenario: No device satisfies both the class and the request
      Given the ResourceClaim:
        """yaml
        metadata: {name: nic-as-gpu}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: device.driver == "nic.example.com"}
        """
      And a pod "trainer" using claim "nic-as-gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "nic-as-gpu" is not allocated

    Scenario: A node where the first request has no candidate fails there, before a later selector errs
      Given a node "worker-2"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-2-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-2, generation: 1, resourceSliceCount: 1}
          nodeName: worker-2
          devices:
          - name: h100-0
            attributes:
              model: {string: H100}
          - name: h100-1
            attributes:
              model: {string: H100}
              numa: {int: 0}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: two}
        spec:
          devices:
            requests:
            - name: big
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "H100"'}
            - name: near
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].numa == 0'}
        """
      And a pod "trainer" using claim "two"
      When the scheduler runs
      Then claim "two" is allocated devices "h100-0, h100-1"
      And pod "trainer" is bound to node "worker-2"

    # Shapes walk (issue 39): every selector of each list counts, in a class with none or several, and in a
    # request with none or several; in each row only the last selector tells the 80Gi GPU from the others, so a
    # scheduler that reads one selector of a list (or any one true selector) takes gpu-0.
    Scenario Outline: A class with <class> and a request with <request> select the 80Gi GPU
      Given the DeviceClass:
        """yaml
        metadata: {name: shaped}
        spec:
          selectors: <class selectors>
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: big}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: shaped
                selectors: <request selectors>
        """
      And a pod "trainer" using claim "big"
      When the scheduler runs
      Then claim "big" is allocated device "gpu-2"

      @shape:class-selectors:empty @shape:request-selectors:several
      Examples: no class selector, three request selectors
        | class         | request            | class selectors | request selectors |
        | no selectors  | three selectors    | []              | [{cel: {expression: 'device.driver == "gpu.example.com"'}}, {cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}, {cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0'}}] |

      @shape:class-selectors:several @shape:request-selectors:empty
      Examples: three class selectors, no request selector
        | class           | request         | class selectors | request selectors |
        | three selectors | no selectors    | [{cel: {expression: 'device.driver == "gpu.example.com"'}}, {cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}, {cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0'}}] | [] |

      @shape:class-selectors:several @shape:request-selectors:several
      Examples: two class selectors, two request selectors
        | class         | request       | class selectors | request selectors |
        | two selectors | two selectors | [{cel: {expression: 'device.driver == "gpu.example.com"'}}, {cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}] | [{cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0'}}, {cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("64Gi")) >= 0'}}] |

  Rule: KEP-4381/CLASS-MISSING  A request for a DeviceClass that does not exist cannot be allocated

    Scenario: The scheduler names the missing class
      Given the ResourceClaim:
        """yaml
        metadata: {name: fpga}
        spec:
          devices:
            requests:
            - name: fpga
              exactly: {deviceClassName: fpga}
        """
      And a pod "trainer" using claim "fpga"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "fpga" is not allocated

    # Missing also once deleted: an allocator that caches classes must forget a deleted one.
    Scenario: A class deleted before the claim comes is missing for it
      When DeviceClass "gpu" is deleted
      And claim "training" for one "gpu" device is created
      And a pod "trainer" using claim "training" is created
      And the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

  Rule: KEP-4381/EXACT-COUNT  ExactCount gets exactly count devices

    Scenario: Two A100 GPUs for a count of 2
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
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then claim "pair" is allocated devices "gpu-1, gpu-2"

    Scenario: A count of 4 on a node with 3 GPUs does not fit
      Given the ResourceClaim:
        """yaml
        metadata: {name: four}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 4}
        """
      And a pod "trainer" using claim "four"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "four" is not allocated

  Rule: KEP-4381/ALL-MODE  All gets every matching device on the node, or nothing

    @shape:matching-devices:several
    Scenario: All A100s of the node
      Given the objects of manifest "all-a100.yaml"
      And a pod "trainer" using claim "all-a100"
      When the scheduler runs
      Then claim "all-a100" is allocated devices "gpu-1, gpu-2"

    # Shapes walk (issue 39): All over one matching device takes it; over none it does not fit ("at least one"),
    # rather than being satisfied with no device. A second request that fits keeps the node in the search.
    Scenario Outline: All <model> GPUs of the node, where <matching>
      Given the device class "nic" selecting driver "nic.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: all-of-model}
        spec:
          devices:
            requests:
            - name: gpus
              exactly:
                deviceClassName: gpu
                allocationMode: All
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "<model>"'}
            - name: nic
              exactly: {deviceClassName: nic}
        """
      And a pod "trainer" using claim "all-of-model"
      When the scheduler runs
      Then <outcome>

      @shape:matching-devices:one
      Examples: one GPU matches
        | model | matching      | outcome                                     |
        | A10   | one matches   | claim "all-of-model" is allocated devices "gpu-0" for requests "gpus" |

      @shape:matching-devices:empty
      Examples: no GPU matches
        | model | matching      | outcome                                     |
        | H100  | none matches  | pod "trainer" is not scheduled              |

    Scenario: One of the matching devices is in use, so All does not fit
      Given the ResourceClaim:
        """yaml
        metadata: {name: one}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A10"'}
        """
      And a pod "first" using claim "one"
      And the objects of manifest "all-gpus.yaml"
      And a pod "second" using claim "everything"
      When the scheduler runs
      Then claim "one" is allocated device "gpu-0"
      And pod "second" is not scheduled
      And claim "everything" is not allocated

    Scenario: A tainted matching device is part of All, so without a toleration All does not fit
      Given the objects of manifest "tainted-spare-a100.yaml"
      And the objects of manifest "all-a100.yaml"
      And a pod "trainer" using claim "all-a100"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And claim "all-a100" is not allocated

    Scenario: With a toleration All takes the tainted matching device too
      Given the objects of manifest "tainted-spare-a100.yaml"
      And the ResourceClaim:
        """yaml
        metadata: {name: all-a100}
        spec:
          devices:
            requests:
            - name: gpus
              exactly:
                deviceClassName: gpu
                allocationMode: All
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
                tolerations: [{key: example.com/unhealthy, operator: Exists}]
        """
      And a pod "trainer" using claim "all-a100"
      When the scheduler runs
      Then claim "all-a100" is allocated devices "gpu-1, gpu-2, gpu-3"

    Scenario: A matching device that breaks a constraint of the claim makes All an allocation error
      Given the ResourceClaim:
        """yaml
        metadata: {name: same-model}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, allocationMode: All}
            constraints:
            - matchAttribute: gpu.example.com/model
        """
      And a pod "trainer" using claim "same-model"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "SchedulerError"
      And claim "same-model" is not allocated

    Scenario: All over an incomplete pool is an error
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-extra-0}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1-extra, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-3
        """
      And the objects of manifest "all-gpus.yaml"
      And a pod "trainer" using claim "everything"
      When the scheduler runs
      Then pod "trainer" is not scheduled

  Rule: KEP-4381/FIRST-AVAILABLE  The first subrequest with which the claim fits wins

    @shape:subrequests:several
    Scenario: Two 80Gi GPUs are not there, so one 40Gi-or-more GPU is taken
      Given the ResourceClaim:
        """yaml
        metadata: {name: flexible}
        spec:
          devices:
            requests:
            - name: gpu
              firstAvailable:
              - name: two-large
                deviceClassName: gpu
                count: 2
                selectors:
                - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0'}
              - name: one-medium
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}
        """
      And a pod "trainer" using claim "flexible"
      When the scheduler runs
      Then the allocation of claim "flexible" has results:
        """yaml
        - {request: gpu/one-medium, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        """

    Scenario: When every subrequest fits, the order alone decides: the first one is taken
      Given the ResourceClaim:
        """yaml
        metadata: {name: flexible}
        spec:
          devices:
            requests:
            - name: gpu
              firstAvailable:
              - name: a100
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
              - name: a10
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A10"'}
        """
      And a pod "trainer" using claim "flexible"
      When the scheduler runs
      Then the allocation of claim "flexible" has results:
        """yaml
        - {request: gpu/a100, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        """

    Scenario: A later request makes the first subrequest fail and the second one is taken
      Given the ResourceClaim:
        """yaml
        metadata: {name: flexible}
        spec:
          devices:
            requests:
            - name: gpu
              firstAvailable:
              - name: any-two
                deviceClassName: gpu
                count: 2
              - name: one
                deviceClassName: gpu
            - name: big
              exactly:
                deviceClassName: gpu
                count: 2
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
        """
      And a pod "trainer" using claim "flexible"
      When the scheduler runs
      Then the allocation of claim "flexible" has results:
        """yaml
        - {request: gpu/one, driver: gpu.example.com, pool: worker-1, device: gpu-0}
        - {request: big, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        - {request: big, driver: gpu.example.com, pool: worker-1, device: gpu-2}
        """

    # The gate is on by default from 1.34: a 1.33 scheduler with its defaults refuses the request as one with the
    # gate set off does, and a 1.34 one with its defaults allocates it.
    @shape:subrequests:one
    Scenario Outline: With DRAPrioritizedList <setting> in a <release> scheduler a firstAvailable request <verdict>
      Given kube-scheduler version "<release>" with feature gates "<gates>"
      And the ResourceClaim:
        """yaml
        metadata: {name: flexible}
        spec:
          devices:
            requests:
            - name: gpu
              firstAvailable:
              - {name: one, deviceClassName: gpu}
        """
      And a pod "trainer" using claim "flexible"
      When the scheduler runs
      Then pod "trainer" <outcome>

      Examples:
        | release | setting       | gates                  | verdict           | outcome                        |
        | current | off           | DRAPrioritizedList=off | is an error       | is not scheduled               |
        | 1.33    | off (default) | defaults               | is an error       | is not scheduled               |
        | 1.34    | on (default)  | defaults               | is allocated      | is bound to node "worker-1"    |

  Rule: KEP-4381/CLAIM-LIMIT  One claim gets at most 32 devices

    Scenario: A claim asking for 33 devices cannot be allocated anywhere
      Given the objects of manifest "worker-1-33-nics.yaml"
      And the device class "nic" selecting driver "nic.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: many}
        spec:
          devices:
            requests:
            - name: nics
              exactly: {deviceClassName: nic, count: 20}
            - name: more-nics
              exactly: {deviceClassName: nic, count: 13}
        """
      And a pod "router" using claim "many"
      When the scheduler runs
      Then pod "router" is not scheduled
      And claim "many" is not allocated

    # The limit holds for the alternative tried, not only for the claim's cheapest shape: an allocator that checks
    # it only up front takes all 34 NICs of the node and writes 34 results, which the API server refuses.
    Scenario: A subrequest that would take the claim past 32 devices is passed over for the next one
      Given the objects of manifest "worker-1-33-nics.yaml"
      And the device class "nic" selecting driver "nic.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: many}
        spec:
          devices:
            requests:
            - name: nics
              firstAvailable:
              - {name: every-function, deviceClassName: nic, allocationMode: All}
              - {name: one, deviceClassName: nic}
        """
      And a pod "router" using claim "many"
      When the scheduler runs
      Then pod "router" is bound to node "worker-1"
      And the allocation of claim "many" has results:
        """yaml
        - {request: nics/one, driver: nic.example.com, pool: worker-1, device: nic-0}
        """
