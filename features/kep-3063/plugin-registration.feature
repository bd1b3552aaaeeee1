@kubelet
Feature: A pod waits for its driver's kubelet plugin to register on the node

  The devices of "gpu.example.com" on node "node-1" are published, but the driver's kubelet plugin is not
  registered on the node until the scenario starts the driver; the kubelet of that node is the component under
  test.

  Background:
    Given a node "node-1"
    And the device class "gpu" selecting driver "gpu.example.com"
    And the ResourceSlice:
      """yaml
      metadata: {name: node-1-gpus}
      spec:
        driver: gpu.example.com
        pool: {name: node-1, generation: 1, resourceSliceCount: 1}
        nodeName: node-1
        devices:
        - name: gpu-0
        - name: gpu-1
      """

  Rule: KEP-3063/KUBELET-WAITS-FOR-PLUGIN  Without the driver's plugin on the node the pod waits, and starts once it registers

    Scenario: The pod stays Pending with an event while no plugin is registered, then runs once it is
      Given driver "gpu.example.com" has no kubelet plugin registered on node "node-1"
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And pod "trainer" is Pending
      And a Warning event "FailedPrepareDynamicResources" is recorded for pod "trainer"
      When 10 minutes pass
      Then pod "trainer" is Pending
      When driver "gpu.example.com" is given the devices:
        """yaml
        metadata: {name: node-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: gpu-0
          - name: gpu-1
        """
      And 6 minutes pass
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" once
