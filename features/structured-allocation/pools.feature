@kep-4381 @structured-allocation
Feature: Which published devices count: pools, generations and node reach (structured allocation)

  Background:
    Given nodes "worker-1, worker-2"
    And the device class "gpu" selecting driver "gpu.example.com"

  Rule: KEP-4381/POOL-NEWEST-GENERATION  Only the newest generation of a pool counts

    Scenario: A device still listed in an older generation's slice is not allocated
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gen-1}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-old
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gen-2}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 2, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-new
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-new"

    Scenario: A node keeps the complete older generation it sees while a newer one is incomplete elsewhere
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-1}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-old
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-2-worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 2, resourceSliceCount: 2}
          nodeName: worker-2
          devices:
          - name: gpu-new
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-old"
      And pod "trainer" is bound to node "worker-1"

    Scenario: A node whose newest generation of the pool is incomplete gets nothing, not even the older one
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-1-worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          nodeName: worker-2
          devices:
          - name: gpu-old
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-2-worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 2, resourceSliceCount: 2}
          nodeName: worker-2
          devices:
          - name: gpu-new
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

    Scenario: A generation a node sees only in part is left out there once a newer one exists elsewhere
      Given the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-1-worker-1}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-a
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-1-worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 2}
          nodeName: worker-2
          devices:
          - name: gpu-b
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: fabric-gen-2-worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 2, resourceSliceCount: 2}
          nodeName: worker-2
          devices:
          - name: gpu-b
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

  Rule: KEP-4381/POOL-INCOMPLETE  An incomplete pool is never allocated from

    @shape:pool-slices:fewer
    Scenario: A pool announced as two slices with only one published gives nothing
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-part-0}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

    # Shapes walk (issue 39): "exactly resourceSliceCount" cuts both ways; a pool announced as one slice but
    # published as two is as incomplete as one missing a slice.
    @shape:pool-slices:more
    Scenario: A pool announced as one slice but published as two gives nothing
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-part-0}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-part-1}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-1
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

    Scenario: The pool becomes usable once its second slice is published
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-part-0}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      And the ResourceSlice is created:
        """yaml
        metadata: {name: worker-1-part-1}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-1
        """
      And the scheduler runs
      Then claim "training" is allocated device "gpu-0"
      And pod "trainer" is bound to node "worker-1"

  Rule: KEP-4381/POOL-INVALID  An invalid pool is skipped, and reported only when nothing else fits

    Scenario: Two devices of one name make the pool invalid; another pool serves the claim
      Given the objects of manifest "broken-pool.yaml"
      And the ResourceSlice:
        """yaml
        metadata: {name: healthy}
        spec:
          driver: gpu.example.com
          pool: {name: healthy, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-9
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then the allocation of claim "training" has results:
        """yaml
        - {request: device, driver: gpu.example.com, pool: healthy, device: gpu-9}
        """

    Scenario: With only the invalid pool the scheduler reports it
      Given the objects of manifest "broken-pool.yaml"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And pod "trainer" is not scheduled with reason "Unschedulable"
      And claim "training" is not allocated

    Scenario: An invalid pool fails only its node; the pod goes to the other node
      Given the objects of manifest "broken-pool.yaml"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: worker-2, generation: 1, resourceSliceCount: 1}
          nodeName: worker-2
          devices:
          - name: gpu-7
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-7"
      And pod "trainer" is bound to node "worker-2"

    Scenario: A device consuming a counter set the pool does not publish makes the pool invalid
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: gpu-0-half
            consumesCounters:
            - counterSet: gpu-0
              counters: {memory: {value: 40Gi}}
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"

  Rule: KEP-4381/NODE-REACH  A device is a candidate only on the nodes its slice reaches

    Scenario: A node-local device takes the pod to its node
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: worker-2, generation: 1, resourceSliceCount: 1}
          nodeName: worker-2
          devices:
          - name: gpu-0
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-2"

    Scenario: A slice selecting nodes by label reaches only the labelled node
      Given the Node:
        """yaml
        metadata:
          name: worker-3
          labels: {example.com/rack: r7}
        """
      And the objects of manifest "rack-r7.yaml"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-3"

    Scenario: A node with the label but another value is not reached
      Given the Node:
        """yaml
        metadata:
          name: worker-3
          labels: {example.com/rack: r8}
        """
      And the objects of manifest "rack-r7.yaml"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

    Scenario: With perDeviceNodeSelection each device says which node it reaches
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          perDeviceNodeSelection: true
          devices:
          - name: gpu-on-2
            nodeName: worker-2
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-2"
      And claim "training" is usable only on node "worker-2"

    # D-4381-9: on a node the slice reaches, every device of it meets the selectors before its own node is
    # checked, so a device of a node the scheduler never visits (worker-9 has no Node) can still raise an error.
    Scenario: A device of another node in a per-device slice is evaluated before its node is checked
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          perDeviceNodeSelection: true
          devices:
          - name: gpu-on-9
            nodeName: worker-9
          - name: gpu-on-2
            nodeName: worker-2
            attributes: {model: {string: A100}}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: training}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors:
                - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
        """
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "SchedulerError"
      And claim "training" is not allocated

  Rule: KEP-4381/POOL-INCOMPLETE  Slices the scheduler's gates leave out still count as slices of their pool

    # D-4381-17: without the gate the counter slice is not used, but it is one of the two slices announced.
    Scenario: Without DRAPartitionableDevices in kube-scheduler, a counter slice still completes its pool
      Given kube-scheduler with feature gates "DRAPartitionableDevices=off"
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: gpu-0-mem
            counters: {memory: {value: 80Gi}}
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: worker-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: everything}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, allocationMode: All}
        """
      And a pod "trainer" using claim "everything"
      When the scheduler runs
      Then claim "everything" is allocated device "gpu-0"
      And pod "trainer" is bound to node "worker-1"

  Rule: KEP-4381/POOL-INVALID  Device names need be unique only among the slices reaching the node

    # D-4381-18: each node gathers only its own slice of the pool, so each sees one gpu-0.
    Scenario: A device name repeated in the pool's slice for another node leaves the pool valid
      Given the ResourceSlice:
        """yaml
        metadata: {name: shared-worker-1}
        spec:
          driver: gpu.example.com
          pool: {name: shared, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          devices:
          - name: gpu-0
        """
      And the ResourceSlice:
        """yaml
        metadata: {name: shared-worker-2}
        spec:
          driver: gpu.example.com
          pool: {name: shared, generation: 1, resourceSliceCount: 2}
          nodeName: worker-2
          devices:
          - name: gpu-0
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-0"

  Rule: KEP-4381/COUNTERS  A counter allocated devices over-commit blocks every counter consumer of its pool

    # D-4381-14: the driver shrank set "a" after x and y were allocated; z consumes from set "b" only.
    Scenario: An over-committed counter set leaves no room for a device consuming from another set
      Given the ResourceSlice:
        """yaml
        metadata: {name: worker-1-counters}
        spec:
          driver: gpu.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 2}
          nodeName: worker-1
          sharedCounters:
          - name: a
            counters: {memory: {value: 40Gi}}
          - name: b
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
          - name: x
            consumesCounters: [{counterSet: a, counters: {memory: {value: 40Gi}}}]
          - name: y
            consumesCounters: [{counterSet: a, counters: {memory: {value: 40Gi}}}]
          - name: z
            consumesCounters: [{counterSet: b, counters: {memory: {value: 20Gi}}}]
        """
      And a claim "first" for one "gpu" device
      And claim "first" is allocated device "x" of driver "gpu.example.com" on node "worker-1"
      And a claim "second" for one "gpu" device
      And claim "second" is allocated device "y" of driver "gpu.example.com" on node "worker-1"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated
