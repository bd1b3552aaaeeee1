@kep-3063-classic
Feature: Scheduler and driver negotiate a node through the claim (KEP-3063 kube-scheduler Filter, Pre-score, Reserve; API SchedulingStatus)

  Background:
    Given a cluster serving the classic DRA API
    And nodes "worker-1, worker-2, worker-3"
    And the resource class "acme-gpu" of driver "gpu.acme.com"

  Rule: KEP-3063-CLASSIC/PRESCORE-POTENTIAL-NODES  The nodes that passed filtering become potentialNodes

    Scenario: With the driver not answering yet, every node is a potential node
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then the potential nodes of claim "trainer-res" are "worker-1, worker-2, worker-3"
      And pod "trainer" is not scheduled

    Scenario: When the candidates change, potentialNodes follows
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      And node "worker-3" is deleted
      And the scheduler runs
      Then the potential nodes of claim "trainer-res" are "worker-1, worker-2"

  Rule: KEP-3063-CLASSIC/PRESCORE-WRITE-ON-CHANGE  potentialNodes is written only when it changes

    Scenario: A second attempt that finds the same nodes does not write the claim
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      And claim "trainer-res" is watched for updates
      And 6 minutes pass
      Then claim "trainer-res" was not updated
      And the potential nodes of claim "trainer-res" are "worker-1, worker-2, worker-3"

  Rule: KEP-3063-CLASSIC/FILTER-DENY-LIST  Only unsuitable or unavailable nodes are filtered out

    Scenario: Unjudged nodes stay candidates while listed ones are skipped
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "gpu" of class "acme-gpu"
      And the status of claim "gpu" is:
        """yaml
        phase: Pending
        userLimit: 1
        scheduling:
          scheduler: {potentialNodes: [worker-1]}
          driver: {unsuitableNodes: [worker-1]}
        """
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" has selected one of nodes "worker-2, worker-3"
      And the potential nodes of claim "gpu" are "worker-2, worker-3"

    Scenario: A pending claim's early availableOnNodes also filters
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "gpu" of class "acme-gpu"
      And the status of claim "gpu" is:
        """yaml
        phase: Pending
        userLimit: 1
        scheduling:
          driver:
            availableOnNodes:
              nodeSelectorTerms:
              - matchFields: [{key: metadata.name, operator: In, values: [worker-3]}]
        """
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" has selected node "worker-3"
      And the potential nodes of claim "gpu" are "worker-3"

  Rule: KEP-3063-CLASSIC/FILTER-ALLOCATED-AVAILABLE-ON  An allocated claim keeps the pod to its nodes

    Scenario: A pod using an Immediate claim allocated on worker-2 runs there
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-2: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      When the scheduler runs
      Then claim "gpu" is available only on node "worker-2"
      When a pod "trainer" using claim "gpu" is created
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-2"

    Scenario: An allocation without availableOnNodes is usable on every node
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And the status of claim "gpu" is:
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        attributes: {fabric: shared}
        """
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is bound to one of nodes "worker-1, worker-2, worker-3"

  Rule: KEP-3063-CLASSIC/RESERVE-SELECTS-NODE  Reserve writes selectedNode and does not bind

    Scenario: The scheduler selects one of the candidates and waits for the driver
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then claim "trainer-res" has selected one of nodes "worker-1, worker-2, worker-3"
      And pod "trainer" is not scheduled
      And claim "trainer-res" is reserved for nobody

  Rule: KEP-3063-CLASSIC/SCHEDULER-NEVER-SELECTS-FOR-IMMEDIATE  Immediate claims get no selectedNode from the scheduler

    # Also PREFILTER-IMMEDIATE-PENDING's other half: the pod waits without the scheduler touching the claim.
    @rule:KEP-3063-CLASSIC/PREFILTER-IMMEDIATE-PENDING
    Scenario: A pod waiting for an unallocated Immediate claim leaves its scheduling fields alone
      Given the classic driver "gpu.acme.com" runs with no capacity anywhere
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "gpu" has no selected node
      And claim "gpu" has no potential nodes

  Rule: KEP-3063-CLASSIC/PREFILTER-IMMEDIATE-PENDING  An unallocated Immediate claim keeps its pod pending

    Scenario: The pod is scheduled once the driver allocates the Immediate claim
      Given the classic driver "gpu.acme.com" runs with no capacity anywhere
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      When the classic driver "gpu.acme.com" is reconfigured with:
        """yaml
        capacity: {worker-3: 1}
        """
      And the scheduler runs
      Then claim "gpu" is in phase "Allocated"
      And pod "trainer" is bound to node "worker-3"

  Rule: KEP-3063-CLASSIC/PREFILTER-MISSING-CLAIM  A pod waits for a claim that does not exist yet

    Scenario: The pod is scheduled once its named claim is created
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "gpu" does not exist
      When a classic claim "gpu" of class "acme-gpu" is created
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"

  Rule: KEP-3063-CLASSIC/RETRY-ON-CLAIM-CHANGE  A claim's change alone brings the pod back

    Scenario: The driver's allocation, with no other event, gets the pod bound
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then claim "trainer-res" has selected one of nodes "worker-1, worker-2, worker-3"
      When the classic driver "gpu.acme.com" is reconfigured with:
        """yaml
        capacity: {worker-1: 1, worker-2: 1, worker-3: 1}
        """
      And the scheduler runs
      Then pod "trainer" is bound to one of nodes "worker-1, worker-2, worker-3"

  Rule: KEP-3063-CLASSIC/SELECTED-NODE-FAILURE-REACTED  A refused selected node sends the scheduler elsewhere

    # The driver's answer is a claim change that is not an allocation: nothing else brings the pod back, so
    # each row is also RETRY-ON-CLAIM-CHANGE for the other two changes its rule names.
    @rule:KEP-3063-CLASSIC/RETRY-ON-CLAIM-CHANGE
    Scenario Outline: The driver says no by <signal> and the pod lands on worker-2
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1, worker-2: 1}
        refuse: [worker-1]
        on_failure: <signal>
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-2"
      And claim "trainer-res" is available only on node "worker-2"

      Examples:
        | signal      |
        | unset       |
        | unsuitable  |

  Rule: KEP-3063-CLASSIC/BIND-AFTER-ALLOCATION  Binding comes only after allocation and reservation

    Scenario: The full Delayed negotiation over several rounds ends with the pod bound
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-3: 1}
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then claim "trainer-res" is in phase "Allocated"
      And claim "trainer-res" is available only on node "worker-3"
      And claim "trainer-res" is reserved for pod "trainer"
      And pod "trainer" is bound to node "worker-3"

    Scenario: A stalled driver keeps the pod unbound however long it waits
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is not scheduled
      And claim "trainer-res" is in phase "Pending"
