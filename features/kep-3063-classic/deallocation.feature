@kep-3063-classic
Feature: The scheduler asks for an allocation to be undone when it keeps the pod off every node (KEP-3063 kube-scheduler Post-filter)

  Background:
    Given a cluster serving the classic DRA API
    And nodes "worker-1, worker-2"
    And the resource class "acme-gpu" of driver "gpu.acme.com"

  Rule: KEP-3063-CLASSIC/POSTFILTER-DEALLOCATES  An allocation that excludes every fitting node is sent back

    Scenario: Two claims split across nodes are brought together on worker-2
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1, worker-2: 2}
        """
      And a pod "pair" with template claims of classes "acme-gpu", "acme-gpu"
      When the scheduler runs
      Then pod "pair" is bound to node "worker-2"
      And claim "pair-res" is available only on node "worker-2"
      And claim "pair-res-1" is available only on node "worker-2"

    Scenario: With the driver stalled the scheduler's own write is the Reallocate phase
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "held" of class "acme-gpu"
      And the status of claim "held" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        scheduling:
          driver:
            availableOnNodes:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]}]
        """
      And a classic claim "blocked" of class "acme-gpu"
      And the status of claim "blocked" is:
        """yaml
        phase: Pending
        userLimit: 1
        scheduling:
          scheduler: {potentialNodes: [worker-1, worker-2]}
          driver: {unsuitableNodes: [worker-1]}
        """
      And a pod "trainer" using claims "held, blocked"
      When the scheduler runs
      Then claim "held" is in phase "Reallocate"
      And pod "trainer" is not scheduled

  Rule: KEP-3063-CLASSIC/POSTFILTER-ONLY-ELIGIBLE  Immediate, in-use and harmless claims are never deallocated

    Scenario: An Immediate claim that keeps the pod off worker-2 stays allocated
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "fixed" of class "acme-gpu" with Immediate allocation
      And a classic claim "blocked" of class "acme-gpu"
      And a pod "trainer" using claims "fixed, blocked"
      When the scheduler runs
      And 10 minutes pass
      Then claim "fixed" is in phase "Allocated"
      And claim "fixed" is available only on node "worker-1"
      And pod "trainer" is not scheduled

    Scenario: A claim another pod uses stays allocated
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        user_limit: -1
        """
      And a classic claim "shared" of class "acme-gpu"
      And a pod "owner" using claim "shared"
      When the scheduler runs
      Then pod "owner" is bound to node "worker-1"
      When the classic driver "gpu.acme.com" is reconfigured with:
        """yaml
        capacity: {worker-1: 1}
        refuse: [worker-1]
        user_limit: -1
        """
      And a classic claim "blocked" of class "acme-gpu" is created
      And a pod "trainer" using claims "shared, blocked" is created
      And the scheduler runs
      And 10 minutes pass
      Then claim "shared" is in phase "Allocated"
      And claim "shared" is reserved for pod "owner"
      And pod "trainer" is not scheduled

    Scenario: A claim that excluded no node stays allocated
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "anywhere" of class "acme-gpu"
      And the status of claim "anywhere" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        attributes: {fabric: shared}
        """
      And a classic claim "blocked" of class "acme-gpu"
      And the status of claim "blocked" is:
        """yaml
        phase: Pending
        userLimit: 1
        scheduling:
          driver: {unsuitableNodes: [worker-1, worker-2]}
        """
      And a pod "trainer" using claims "anywhere, blocked"
      When the scheduler runs
      Then claim "anywhere" is in phase "Allocated"
      And pod "trainer" is not scheduled

  Rule: KEP-3063-CLASSIC/POSTFILTER-ONE-IN-FLIGHT  One deallocation at a time per pod

    Scenario: Of two eligible claims only one, either, is set to Reallocate while the driver has not acted
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And the objects:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        kind: ResourceClaim
        metadata: {name: first, namespace: default}
        spec: {resourceClassName: acme-gpu}
        ---
        apiVersion: cdi.k8s.io/v1alpha1
        kind: ResourceClaim
        metadata: {name: second, namespace: default}
        spec: {resourceClassName: acme-gpu}
        ---
        apiVersion: cdi.k8s.io/v1alpha1
        kind: ResourceClaim
        metadata: {name: blocked, namespace: default}
        spec: {resourceClassName: acme-gpu}
        """
      And the status of claim "first" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        scheduling:
          driver:
            availableOnNodes:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]}]
        """
      And the status of claim "second" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        scheduling:
          driver:
            availableOnNodes:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]}]
        """
      And the status of claim "blocked" is:
        """yaml
        phase: Pending
        userLimit: 1
        scheduling:
          driver: {unsuitableNodes: [worker-1]}
        """
      And a pod "trainer" using claims "first, second, blocked"
      When the scheduler runs
      And 10 minutes pass
      Then one of claims "first, second" is in phase "Reallocate" and the other in phase "Allocated"

    Scenario: After the driver frees the claim the scheduler picked, the pod is scheduled with a new allocation
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And the objects:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        kind: ResourceClaim
        metadata: {name: first, namespace: default}
        spec: {resourceClassName: acme-gpu}
        ---
        apiVersion: cdi.k8s.io/v1alpha1
        kind: ResourceClaim
        metadata: {name: second, namespace: default}
        spec: {resourceClassName: acme-gpu}
        """
      And the status of claim "first" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        scheduling:
          driver:
            availableOnNodes:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-1]}]}]
        """
      And the status of claim "second" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        scheduling:
          driver:
            availableOnNodes:
              nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [worker-2]}]}]
        """
      And a pod "trainer" using claims "first, second"
      When the scheduler runs
      Then one of claims "first, second" is in phase "Reallocate" and the other in phase "Allocated"
      When the classic driver "gpu.acme.com" is reconfigured with:
        """yaml
        capacity: {worker-2: 2}
        """
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-2"
      And claim "first" is available only on node "worker-2"
      And claim "second" is available only on node "worker-2"
