@kep-4381 @kep-5007 @structured-allocation
Feature: Devices with binding conditions in allocation (structured allocation, KEP-5007)

  Background:
    Given a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"

  Rule: KEP-4381/BINDING-CONDITIONS-GATED  With either gate off, devices with binding conditions are never chosen

    Scenario Outline: A scheduler with <gate> off passes over the only device, which has binding conditions
      Given kube-scheduler with feature gates "<gate>=off"
      And the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |
        | DRAResourceClaimDeviceStatus |

    Scenario: With a gate off bindsToNode alone does not pin the allocation
      Given kube-scheduler with feature gates "DRADeviceBindingConditions=off"
      And the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-0"
      And the allocation of claim "training" is usable on every node

  Rule: KEP-4381/BINDING-CONDITIONS-LAST  Devices without binding conditions are tried first

    Scenario: Within one pool the plain device is chosen although the one with conditions comes first
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-attachable
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
          - name: gpu-plain
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-plain"
      And pod "trainer" is bound to node "worker-1"

    Scenario: A device with conditions is taken once the plain devices are gone
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-attachable
            bindingConditions: [dra.example.com/attached]
            bindingFailureConditions: [dra.example.com/attach-failed]
          - name: gpu-plain
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: both}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: fabric-gpu, count: 2}
        """
      And a pod "trainer" using claim "both"
      When the scheduler runs
      Then the allocation of claim "both" has results:
        """yaml
        - {request: gpus, driver: gpu.example.com, pool: fabric, device: gpu-plain}
        - request: gpus
          driver: gpu.example.com
          pool: fabric
          device: gpu-attachable
          bindingConditions: [dra.example.com/attached]
          bindingFailureConditions: [dra.example.com/attach-failed]
        """

  Rule: KEP-4381/BINDING-CONDITIONS-COPIED  Results copy the device's binding conditions

    Scenario: The result of an attachable device carries both condition lists, and bindsToNode pins it
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
            bindsToNode: true
            bindingConditions: [dra.example.com/attached, dra.example.com/healthy]
            bindingFailureConditions: [dra.example.com/attach-failed]
        """
      And a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then the allocation of claim "training" copies binding conditions "dra.example.com/attached, dra.example.com/healthy" and failure conditions "dra.example.com/attach-failed"
      And claim "training" is usable only on node "worker-1"
