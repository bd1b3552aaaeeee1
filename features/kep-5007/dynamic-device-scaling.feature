@kep-5007
Feature: Dynamic device scaling with binding conditions (KEP-5007 beta feedback from CoHDI)

  A resource pool of fabric GPUs is published by model, with binding conditions and no node. The
  reference dynamic device scaler attaches an allocated pool device to the chosen node (the vendor's
  node-local ResourceSlice then publishes it) and asks for a reschedule with a binding failure
  condition; the pod then runs on the node-local device. Devices go back to the pool when pods end.
  One node, so which node the scheduler picks among equals is not in question.

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And nodes "worker-1"
    And the DeviceClass:
      """yaml
      metadata: {name: a100}
      spec:
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}
      """
    And the ResourceSlice:
      """yaml
      metadata: {name: fabric-pool}
      spec:
        driver: composable.example.com
        pool: {name: fabric-pool, generation: 1, resourceSliceCount: 1}
        allNodes: true
        devices:
        - name: a100-0
          attributes: {gpu.example.com/model: {string: A100}}
          bindsToNode: true
          bindingConditions: [composable.example.com/fabric-device-ready]
          bindingFailureConditions: [composable.example.com/fabric-device-reschedule, composable.example.com/fabric-device-failed]
        - name: a100-1
          attributes: {gpu.example.com/model: {string: A100}}
          bindsToNode: true
          bindingConditions: [composable.example.com/fabric-device-ready]
          bindingFailureConditions: [composable.example.com/fabric-device-reschedule, composable.example.com/fabric-device-failed]
      """

  Rule: KEP-5007/DDS-POOL-DEVICES-ALLOCATABLE  A pool device advertised by model can be allocated

    Scenario: The pod gets a pool device and waits, with the chosen node recorded in the claim
      Given a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      Then pod "trainer" waits in PreBind
      And the claim of pod "trainer" is allocated device "a100-0"
      And the claim of pod "trainer" is usable only on node "worker-1"

  Rule: KEP-5007/DDS-RESCHEDULE-ONTO-ATTACHED  After attaching, a failure condition moves the pod onto the node-local device

    Scenario: The scaler attaches the device and the rescheduled pod binds to it without waiting
      Given the dynamic device scaler attaches devices of pool driver "composable.example.com" as devices of driver "gpu.example.com", taking 1 minute
      And a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      And 1 minute passes
      Then pod "trainer" was sent back from PreBind
      And ResourceSlice "worker-1-gpu.example.com-attached" publishes device "attached-0"
      And ResourceSlice "fabric-pool" publishes device "a100-1"
      When 10 seconds pass
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" is allocated device "attached-0"
      And the allocation of the claim of pod "trainer" carries no binding conditions
      And every allocated device is published and allocated to one claim only

  Rule: KEP-5007/DDS-DETACH  A device goes back to the pool when its pod ends

    # The pod ends by deletion: no kubelet plugin serves the attached device here, so its containers never
    # start and cannot finish (only a kubelet writes a pod's phase).
    Scenario: When the pod is deleted the attached device is detached and the pool has two devices again
      Given the dynamic device scaler attaches devices of pool driver "composable.example.com" as devices of driver "gpu.example.com", taking 1 minute
      And a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      And 61 seconds pass
      Then pod "trainer" is bound to node "worker-1"
      When pod "trainer" is deleted
      And the scheduler runs
      Then ResourceSlice "worker-1-gpu.example.com-attached" publishes devices ""
      And ResourceSlice "fabric-pool" publishes devices "a100-0, a100-1"

  Rule: KEP-5007/DDS-POOL-SHRINK  The pool shrinking under a waiting pod is handled without inconsistency

    Scenario: The device a pod waits for leaves the pool; the pod is rescheduled onto the one that is left
      Given the dynamic device scaler attaches devices of pool driver "composable.example.com" as devices of driver "gpu.example.com", taking 5 minutes
      And a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      Then the claim of pod "trainer" is allocated device "a100-0"
      When the ResourceSlice "fabric-pool" is replaced with:
        """yaml
        spec:
          driver: composable.example.com
          pool: {name: fabric-pool, generation: 2, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: a100-1
            attributes: {gpu.example.com/model: {string: A100}}
            bindsToNode: true
            bindingConditions: [composable.example.com/fabric-device-ready]
            bindingFailureConditions: [composable.example.com/fabric-device-reschedule, composable.example.com/fabric-device-failed]
        """
      And the scheduler runs
      Then pod "trainer" was sent back from PreBind
      And every allocated device is published and allocated to one claim only
      When 1 second passes
      Then pod "trainer" waits in PreBind
      And the claim of pod "trainer" is allocated device "a100-1"
      And every allocated device is published and allocated to one claim only
      When 6 minutes pass
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" is allocated device "attached-0"
      And every allocated device is published and allocated to one claim only

    Scenario: The pool empties under a waiting pod; the pod stays pending with nothing allocated
      Given the dynamic device scaler attaches devices of pool driver "composable.example.com" as devices of driver "gpu.example.com", taking 5 minutes
      And a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      And the ResourceSlice "fabric-pool" is replaced with:
        """yaml
        spec:
          driver: composable.example.com
          pool: {name: fabric-pool, generation: 2, resourceSliceCount: 1}
          allNodes: true
          devices: []
        """
      And 1 minute passes
      Then pod "trainer" is not scheduled
      And the claim of pod "trainer" is not allocated
      And every allocated device is published and allocated to one claim only

  Rule: KEP-5007/DDS-POOL-DEVICES-ALLOCATABLE  With either gate off in kube-scheduler the pool's devices are no candidates, so the scaler has nothing to attach

    # The gate-off side of the whole flow: no pool device is allocated, nothing waits, times out or is attached,
    # and a pool shrinking meanwhile leaves no claim holding a device no slice publishes.
    @rule:KEP-5007/DDS-RESCHEDULE-ONTO-ATTACHED @rule:KEP-5007/DDS-DETACH @rule:KEP-5007/DDS-POOL-SHRINK
    @rule:KEP-5007/DDS-AFTER-TIMEOUT
    Scenario Outline: With <gate> off in kube-scheduler the pod stays pending and the scaler attaches nothing
      Given kube-scheduler with feature gates "<gate>=off"
      And the dynamic device scaler attaches devices of pool driver "composable.example.com" as devices of driver "gpu.example.com", taking 1 minute
      And a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      And 11 minutes pass
      And the ResourceSlice "fabric-pool" is replaced with:
        """yaml
        spec:
          driver: composable.example.com
          pool: {name: fabric-pool, generation: 2, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: a100-1
            attributes: {gpu.example.com/model: {string: A100}}
            bindsToNode: true
            bindingConditions: [composable.example.com/fabric-device-ready]
            bindingFailureConditions: [composable.example.com/fabric-device-reschedule, composable.example.com/fabric-device-failed]
        """
      And 2 minutes pass
      Then pod "trainer" is not scheduled
      And the claim of pod "trainer" is not allocated
      And ResourceSlice "fabric-pool" publishes devices "a100-1"
      And every allocated device is published and allocated to one claim only

      Examples:
        | gate                         |
        | DRADeviceBindingConditions   |

  Rule: KEP-5007/DDS-AFTER-TIMEOUT  A timed-out pod is scheduled normally once its device can be attached

    Scenario: The scaler deployed after a timeout still gets the pod running
      Given a pod "trainer" with a claim for one "a100" device
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" was sent back from PreBind
      When the dynamic device scaler is deployed, attaching devices of pool driver "composable.example.com" as devices of driver "gpu.example.com", taking 1 minute
      And 2 minutes pass
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" is allocated device "attached-0"
