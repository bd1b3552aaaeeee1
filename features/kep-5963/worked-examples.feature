@kep-5963
Feature: The KEP's four worked examples (KEP-5963 Design Details / Examples)

  The manifests are the KEP's, with four repairs a reviewer should know about:
  - the KEP's claims put deviceClassName and selectors directly on the request (the v1beta1 shape)
    while saying resource.k8s.io/v1; here they sit under `exactly`, as v1 requires;
  - the KEP's selectors read `device.attributes['type'].string`, but CEL sees attributes by domain
    and name (`device.attributes['gpu.example.com'].type`), so the KEP's expression is an error;
  - the KEP's counter-set slices name no node, which v1 validation refuses (exactly one of nodeName,
    nodeSelector, allNodes, perDeviceNodeSelection); here they carry `nodeName: node-1`;
  - Example 4 publishes devices of driver device.example.com, which the DeviceClass shared by all
    examples (driver gpu.example.com) does not select; Example 4 adds a class for its driver.

  Background:
    Given a cluster with feature gates "DRADeviceCompatibilityGroups" on
    And a node "node-1"
    And the DeviceClass:
      """yaml
      metadata:
        name: gpu.example.com
      spec:
        selectors:
        - cel:
            expression: device.driver == 'gpu.example.com'
      """
    And the ResourceClaim:
      """yaml
      metadata:
        name: pod-a-gpu
      spec:
        devices:
          requests:
          - name: gpu
            exactly:
              deviceClassName: gpu.example.com
              selectors:
              - cel:
                  expression: device.attributes['gpu.example.com'].type == 'mig-1g'
      """

  Rule: KEP-5963/COUNTERS-UNCHANGED  Example 1: partitions of one scheme share the counters as before

    Scenario: Example 1: two MIG 1g partitions fit in the GPU's 100 multiprocessors
      Given the ResourceSlice:
        """yaml
        metadata:
          name: node-1-gpu-0-counters
        spec:
          driver: gpu.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0-counters
            counters:
              multiprocessors: {value: "100"}
        """
      And the ResourceSlice:
        """yaml
        metadata:
          name: node-1-gpu-0-devices
        spec:
          driver: gpu.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-1g-0
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "20"}
          - name: gpu-0-mig-1g-1
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "20"}
          - name: gpu-0-mig-1g-2
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "20"}
        """
      And the ResourceClaim:
        """yaml
        metadata:
          name: pod-b-gpu
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel:
                    expression: device.attributes['gpu.example.com'].type == 'mig-1g'
        """
      And a pod "pod-a" using claim "pod-a-gpu"
      When the scheduler runs
      And a pod "pod-b" using claim "pod-b-gpu" is created
      And the scheduler runs
      Then claim "pod-a-gpu" is allocated device "gpu-0-mig-1g-0"
      And claim "pod-b-gpu" is allocated device "gpu-0-mig-1g-1"
      And pod "pod-a" is bound to node "node-1"
      And pod "pod-b" is bound to node "node-1"
      And the allocation of claim "pod-a-gpu" has results:
        """yaml
        - {request: gpu, driver: gpu.example.com, pool: node-1-pool, device: gpu-0-mig-1g-0}
        """

  Rule: KEP-5963/NIL-GROUP-MATCHING  Example 2: without groups, MIG and vGPU devices are co-allocated

    Scenario: Example 2: a MIG partition and a vGPU profile without groups are both allocated (20 + 50 <= 100)
      Given the ResourceSlice:
        """yaml
        metadata:
          name: node-1-gpu-0-counters
        spec:
          driver: gpu.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0-counters
            counters:
              multiprocessors: {value: "100"}
        """
      And the ResourceSlice:
        """yaml
        metadata:
          name: node-1-gpu-0-devices
        spec:
          driver: gpu.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-1g-0
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "20"}
          - name: gpu-0-mig-1g-1
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "20"}
          - name: gpu-0-vgpu-0
            attributes:
              type: {string: vgpu}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "50"}
          - name: gpu-0-vgpu-1
            attributes:
              type: {string: vgpu}
            consumesCounters:
            - counterSet: gpu-0-counters
              counters:
                multiprocessors: {value: "50"}
        """
      And the ResourceClaim:
        """yaml
        metadata:
          name: pod-b-gpu
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel:
                    expression: device.attributes['gpu.example.com'].type == 'vgpu'
        """
      And a pod "pod-a" using claim "pod-a-gpu"
      When the scheduler runs
      And a pod "pod-b" using claim "pod-b-gpu" is created
      And the scheduler runs
      Then claim "pod-a-gpu" is allocated device "gpu-0-mig-1g-0"
      And claim "pod-b-gpu" is allocated device "gpu-0-vgpu-0"
      And pod "pod-b" is bound to node "node-1"

  Rule: KEP-5963/SHARED-GROUP-REQUIRED  Example 3: groups "mig" and "vgpu" keep the two schemes apart

    Background:
      Given the ResourceSlice:
        """yaml
        metadata:
          name: node-1-gpu-0-counters
        spec:
          driver: gpu.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: gpu-0-counters
            counters:
              multiprocessors: {value: "100"}
        """
      And the ResourceSlice:
        """yaml
        metadata:
          name: node-1-gpu-0-devices
        spec:
          driver: gpu.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: gpu-0-mig-1g-0
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              compatibilityGroups: [mig]
              counters:
                multiprocessors: {value: "20"}
          - name: gpu-0-mig-1g-1
            attributes:
              type: {string: mig-1g}
            consumesCounters:
            - counterSet: gpu-0-counters
              compatibilityGroups: [mig]
              counters:
                multiprocessors: {value: "20"}
          - name: gpu-0-vgpu-0
            attributes:
              type: {string: vgpu}
            consumesCounters:
            - counterSet: gpu-0-counters
              compatibilityGroups: [vgpu]
              counters:
                multiprocessors: {value: "50"}
          - name: gpu-0-vgpu-1
            attributes:
              type: {string: vgpu}
            consumesCounters:
            - counterSet: gpu-0-counters
              compatibilityGroups: [vgpu]
              counters:
                multiprocessors: {value: "50"}
        """
      And the ResourceClaim:
        """yaml
        metadata:
          name: pod-b-gpu
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel:
                    expression: device.attributes['gpu.example.com'].type == 'vgpu'
        """

    Scenario: Example 3: with a MIG partition allocated, the vGPU pod is unschedulable
      Given a pod "pod-a" using claim "pod-a-gpu"
      When the scheduler runs
      And a pod "pod-b" using claim "pod-b-gpu" is created
      And the scheduler runs
      Then the allocation of claim "pod-a-gpu" has results:
        """yaml
        - request: gpu
          driver: gpu.example.com
          pool: node-1-pool
          device: gpu-0-mig-1g-0
          compatibilityGroups: {gpu-0-counters: [mig]}
        """
      And pod "pod-b" is not scheduled with reason "Unschedulable"
      And claim "pod-b-gpu" is not allocated

    # Every partition of Example 3 declares a group, so a gate-off scheduler allocates neither pod's device.
    Scenario: Example 3 with kube-scheduler's gate off: neither the MIG pod nor the vGPU pod is scheduled
      Given kube-scheduler is "new, gate off" (DRADeviceCompatibilityGroups)
      And a pod "pod-a" using claim "pod-a-gpu"
      And a pod "pod-b" using claim "pod-b-gpu"
      When the scheduler runs
      Then pod "pod-a" is not scheduled with reason "Unschedulable"
      And pod "pod-b" is not scheduled with reason "Unschedulable"
      And claim "pod-a-gpu" is not allocated
      And claim "pod-b-gpu" is not allocated

    Scenario: Example 3 in the other order: with a vGPU profile allocated, the MIG pod is unschedulable
      Given a pod "pod-b" using claim "pod-b-gpu"
      When the scheduler runs
      And a pod "pod-a" using claim "pod-a-gpu" is created
      And the scheduler runs
      Then claim "pod-b-gpu" is allocated device "gpu-0-vgpu-0"
      And pod "pod-a" is not scheduled with reason "Unschedulable"
      And claim "pod-a-gpu" is not allocated

    Scenario: Example 3: two MIG partitions share group "mig" and are both allocated
      Given the ResourceClaim:
        """yaml
        metadata:
          name: pod-c-gpu
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel:
                    expression: device.attributes['gpu.example.com'].type == 'mig-1g'
        """
      And a pod "pod-a" using claim "pod-a-gpu"
      When the scheduler runs
      And a pod "pod-c" using claim "pod-c-gpu" is created
      And the scheduler runs
      Then claim "pod-a-gpu" is allocated device "gpu-0-mig-1g-0"
      And claim "pod-c-gpu" is allocated device "gpu-0-mig-1g-1"
      And pod "pod-c" is bound to node "node-1"

    Scenario: Example 3: two vGPU profiles share group "vgpu" and are both allocated (50 + 50 <= 100)
      Given the ResourceClaim:
        """yaml
        metadata:
          name: pod-d-gpu
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu.example.com
                selectors:
                - cel:
                    expression: device.attributes['gpu.example.com'].type == 'vgpu'
        """
      And a pod "pod-b" using claim "pod-b-gpu"
      When the scheduler runs
      And a pod "pod-d" using claim "pod-d-gpu" is created
      And the scheduler runs
      Then claim "pod-b-gpu" is allocated device "gpu-0-vgpu-0"
      And claim "pod-d-gpu" is allocated device "gpu-0-vgpu-1"
      And pod "pod-d" is bound to node "node-1"

  Rule: KEP-5963/ROLLING-INTERSECTION  Example 4: foo and bar meet in "foobar", baz meets neither

    Background:
      Given the DeviceClass:
        """yaml
        metadata:
          name: device.example.com
        spec:
          selectors:
          - cel:
              expression: device.driver == 'device.example.com'
        """
      And the ResourceSlice:
        """yaml
        metadata:
          name: node-1-device-0-counters
        spec:
          driver: device.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          sharedCounters:
          - name: device-0-counters
            counters:
              units: {value: "100"}
        """
      And the ResourceSlice:
        """yaml
        metadata:
          name: node-1-device-0-devices
        spec:
          driver: device.example.com
          pool: {name: node-1-pool, generation: 1, resourceSliceCount: 2}
          nodeName: node-1
          devices:
          - name: device-0-foo-0
            attributes:
              type: {string: foo}
            consumesCounters:
            - counterSet: device-0-counters
              compatibilityGroups: [foo, foobar]
              counters:
                units: {value: "25"}
          - name: device-0-bar-0
            attributes:
              type: {string: bar}
            consumesCounters:
            - counterSet: device-0-counters
              compatibilityGroups: [bar, foobar]
              counters:
                units: {value: "25"}
          - name: device-0-baz-0
            attributes:
              type: {string: baz}
            consumesCounters:
            - counterSet: device-0-counters
              compatibilityGroups: [baz]
              counters:
                units: {value: "50"}
        """
      And the objects:
        """yaml
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: foo, namespace: default}
        spec:
          devices:
            requests:
            - name: device
              exactly:
                deviceClassName: device.example.com
                selectors:
                - cel: {expression: "device.attributes['device.example.com'].type == 'foo'"}
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: bar, namespace: default}
        spec:
          devices:
            requests:
            - name: device
              exactly:
                deviceClassName: device.example.com
                selectors:
                - cel: {expression: "device.attributes['device.example.com'].type == 'bar'"}
        ---
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: baz, namespace: default}
        spec:
          devices:
            requests:
            - name: device
              exactly:
                deviceClassName: device.example.com
                selectors:
                - cel: {expression: "device.attributes['device.example.com'].type == 'baz'"}
        """

    Scenario: Example 4: after foo, a pod asking for bar succeeds because both declare "foobar"
      Given a pod "pod-a" using claim "foo"
      When the scheduler runs
      And a pod "pod-b" using claim "bar" is created
      And the scheduler runs
      Then claim "foo" is allocated device "device-0-foo-0"
      And claim "bar" is allocated device "device-0-bar-0"
      And pod "pod-b" is bound to node "node-1"

    Scenario: Example 4: after foo, a pod asking for baz is rejected (foo, foobar vs baz)
      Given a pod "pod-a" using claim "foo"
      When the scheduler runs
      And a pod "pod-c" using claim "baz" is created
      And the scheduler runs
      Then pod "pod-c" is not scheduled with reason "Unschedulable"
      And claim "baz" is not allocated
