@kep-5007 @exact-time
Feature: A wait for binding conditions times out, counted from the claim's allocation (KEP-5007 timeout)

  Background:
    Given a cluster with feature gates "DRADeviceBindingConditions, DRAResourceClaimDeviceStatus" on
    And a node "worker-1"
    And the device class "fabric-gpu" selecting driver "gpu.example.com"
    And the objects of manifest "fabric-two-gpus.yaml"

  Rule: KEP-5007/TIMEOUT-DEFAULT  The binding timeout is ten minutes by default

    Scenario: The pod still waits after 9 minutes 59 seconds and times out at 10 minutes
      Given a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 599 seconds pass
      Then pod "trainer" waits in PreBind
      When 1 second passes
      Then pod "trainer" was sent back from PreBind

  Rule: KEP-5007/TIMEOUT  A wait that outlasts the timeout clears the allocation and requeues the pod

    Scenario: At the timeout the claim is cleared and the pod is tried again
      Given a claim "training" for one "fabric-gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" was sent back from PreBind
      And claim "training" was cleared
      # Tried again: how soon is the scheduler's (its back-off, how often PreBind looks), so the new allocation
      # is judged some seconds on, as younger than the wait since the timeout, not to the second.
      When 20 seconds pass
      Then pod "trainer" waits in PreBind
      And claim "training" was allocated less than 30 seconds ago

  Rule: KEP-5007/TIMEOUT-CONFIGURABLE  The timeout is a scheduler argument

    Scenario: With bindingTimeout set to 2 minutes the wait ends after 2 minutes
      Given the scheduler's binding timeout is 2 minutes
      And a pod "trainer" with a claim for one "fabric-gpu" device
      When the scheduler runs
      And 119 seconds pass
      Then pod "trainer" waits in PreBind
      When 1 second passes
      Then pod "trainer" was sent back from PreBind

  Rule: KEP-5007/TIMEOUT-ANCHOR  The timeout counts from the claim's allocationTimestamp

    Scenario: A second pod sharing the claim gets only what is left of the timeout
      Given a claim "shared" for one "fabric-gpu" device
      And a pod "first" using claim "shared"
      When the scheduler runs
      And 8 minutes pass
      And a pod "second" using claim "shared" is created
      And the scheduler runs
      Then pod "second" waits in PreBind
      And claim "shared" was allocated 8 minutes ago
      When 2 minutes pass
      Then pod "first" was sent back from PreBind
      And pod "second" was sent back from PreBind
      And claim "shared" was cleared

    Scenario: A pod with claims allocated at different times times out with the older claim
      Given a claim "early" for one "fabric-gpu" device
      And a claim "late" for one "fabric-gpu" device
      And a pod "warmup" using claim "early"
      When the scheduler runs
      And 6 minutes pass
      And a pod "trainer" using claims "early, late" is created
      And the scheduler runs
      Then pod "trainer" waits in PreBind
      And claim "early" was allocated 6 minutes ago
      And claim "late" was allocated 0 seconds ago
      When 4 minutes pass
      Then pod "trainer" was sent back from PreBind
      And claim "early" was cleared
      # The younger claim did not time out: the scheduler only drops the pod's reservation, as upstream's
      # Unreserve does (upstream's resourceclaim controller deallocates only when it removes the last consumer).
      And claim "late" was unreserved

    Scenario: Once the older claim is ready the younger claim's own deadline applies
      Given a claim "early" for one "fabric-gpu" device
      And a claim "late" for one "fabric-gpu" device
      And a pod "warmup" using claim "early"
      When the scheduler runs
      And 6 minutes pass
      And a pod "trainer" using claims "early, late" is created
      And the scheduler runs
      And 1 minute passes
      And the driver sets condition "dra.example.com/attached" to "True" on the devices of claim "early"
      And the scheduler runs
      Then pod "warmup" is bound to node "worker-1"
      And pod "trainer" waits in PreBind
      When 8 minutes pass
      Then pod "trainer" waits in PreBind
      When 1 minute passes
      Then pod "trainer" was sent back from PreBind
      And claim "late" was cleared
      And claim "early" is reserved for pod "warmup"

  Rule: KEP-5007/TIMEOUT-WITHOUT-TIMESTAMP  A claim without allocationTimestamp times out from the pod's PreBind

    Scenario: A claim allocated by an older component times out ten minutes after the pod started waiting
      Given a claim "legacy" for one "fabric-gpu" device
      And the Pod:
        """yaml
        metadata: {name: holder}
        spec:
          schedulerName: another-scheduler
          nodeName: worker-1
          containers: [{name: main, image: registry.example/app:1}]
          resourceClaims: [{name: gpu, resourceClaimName: legacy}]
        """
      And the status of claim "legacy" is:
        """yaml
        allocation:
          devices:
            results:
            - request: device
              driver: gpu.example.com
              pool: fabric
              device: gpu-0
              bindingConditions: [dra.example.com/attached]
              bindingFailureConditions: [dra.example.com/attach-failed]
          nodeSelector:
            nodeSelectorTerms:
            - matchFields:
              - {key: metadata.name, operator: In, values: [worker-1]}
        reservedFor:
        - {resource: pods, name: holder}
        """
      When 5 minutes pass
      And a pod "trainer" using claim "legacy" is created
      And the scheduler runs
      Then pod "trainer" waits in PreBind
      And claim "legacy" has no allocationTimestamp
      When 9 minutes pass
      Then pod "trainer" waits in PreBind
      When 1 minute passes
      Then pod "trainer" was sent back from PreBind
      And claim "legacy" is reserved for pod "holder"
      And claim "legacy" is allocated device "gpu-0"
