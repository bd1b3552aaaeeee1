@kep-3063
Feature: The scheduler allocates a pod's claims before binding it (KEP-3063 kube-scheduler)

  Background:
    Given nodes "worker-1, worker-2"
    And the device class "gpu" selecting driver "gpu.example.com"

  Rule: KEP-3063/ALLOCATE-BEFORE-BIND  A pod is bound only after its claims are allocated on its node

    Scenario: A pod gets a node-local device and lands on that device's node
      Given node "worker-2" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is allocated device "gpu-0"
      And claim "training" is usable only on node "worker-2"
      And pod "trainer" is bound to node "worker-2"

    Scenario: Without a matching device the pod stays unbound and the claim unallocated
      Given the ResourceSlice:
        """yaml
        spec:
          driver: nic.example.com
          pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
          nodeName: worker-1
          devices:
          - name: nic-0
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "training" is not allocated

  Rule: KEP-3063/PODS-WITHOUT-CLAIMS  A pod without claims is scheduled as if DRA did not exist

    @shape:pod-claims:absent @shape:pod-claims:empty
    # DynamicResourceAllocation is locked on from 1.35: a 1.34 scheduler is the last that can run without it.
    Scenario Outline: A pod whose resourceClaims is <form>, with DRA gates <gates> (kube-scheduler <version>)
      Given kube-scheduler version "<version>" with feature gates "<gates>"
      And a pod "web" without resource claims (resourceClaims <form>)
      When the scheduler runs
      Then pod "web" is bound to a node

      Examples:
        | form   | version | gates                            |
        | absent | current | defaults                         |
        | []     | current | defaults                         |
        | null   | current | defaults                         |
        | absent | 1.34    | DynamicResourceAllocation=off    |

    Scenario: A pod without claims is bound while pods using claims wait or cannot be placed
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "first" for one "gpu" device
      And a claim "second" for one "gpu" device
      And a pod "trainer" using claim "first"
      And a pod "late" using claim "second"
      And a pod "web" without resource claims (resourceClaims absent)
      When the scheduler runs
      Then 1 of pods "trainer, late" is bound to node "worker-1" and the other is not scheduled
      And pod "web" is bound to a node

  Rule: KEP-3063/UNSCHEDULABLE-EXPLAINED  An unschedulable pod says why

    Scenario: The pod's condition and a FailedScheduling event explain the missing devices
      Given a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And a Warning event "FailedScheduling" is recorded for pod "trainer"

  Rule: KEP-3063/RESERVED-FOR-POD  The scheduler reserves the claim for the pod before binding it

    @shape:pod-claims:one
    Scenario: The bound pod is the claim's consumer
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is reserved for pod "trainer"

    # A claim allocated earlier brings no new allocation to write: a scheduler that adds the pod to
    # reservedFor only in the write that allocates passes the scenario above and binds this pod unreserved.
    Scenario: A pod joining an allocated claim is added to its consumers before it is bound
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      When a pod "evaluator" using claim "training" is created
      And the scheduler runs
      Then pod "evaluator" is bound to node "worker-1"
      And claim "training" is reserved for pods "trainer, evaluator"

    # Shapes walk (issue 39): the pod is added to each claim it uses, not only to the first.
    @shape:pod-claims:several
    Scenario: A pod using two claims is the consumer of both
      Given node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
      And a claim "training" for one "gpu" device
      And a claim "evaluation" for one "gpu" device
      And a pod "trainer" using claims "training, evaluation"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "training" is reserved for pod "trainer"
      And claim "evaluation" is reserved for pod "trainer"

  Rule: KEP-3063/ALLOCATED-CLAIM-FILTERS-NODES  A pod follows its claim's existing allocation

    Scenario: A second pod sharing an allocated claim goes to the claim's node, not the first node
      Given node "worker-2" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "shared" for one "gpu" device
      And a pod "first" using claim "shared"
      When the scheduler runs
      Then pod "first" is bound to node "worker-2"
      When a pod "second" using claim "shared" is created
      And the scheduler runs
      Then pod "second" is bound to node "worker-2"

  Rule: KEP-3063/SHARED-CLAIM  Pods can share one claim and its devices

    @shape:reserved-for:several
    Scenario: Two pods use the same single device through one claim
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "shared" for one "gpu" device
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      Then pod "reader" is bound to node "worker-1"
      And pod "writer" is bound to node "worker-1"
      And claim "shared" is allocated device "gpu-0"
      And claim "shared" is reserved for pods "reader, writer"

  Rule: KEP-3063/MISSING-CLAIM-BLOCKS-POD  A pod waits for a claim that does not exist yet

    # Only that the pod stays unbound is judged: upstream holds it back before any scheduling attempt
    # (PreEnqueue), with no PodScheduled condition and no event; a scheduler that tries and reports it passes too.
    Scenario: The pod is scheduled once its claim is created
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a pod "trainer" using claim "later"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      When claim "later" for one "gpu" device is created
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And claim "later" is reserved for pod "trainer"

    # The claim of a template entry exists only once kube-controller-manager generates it: a scheduler that
    # looks only at resourceClaimName entries passes the scenario above and binds this pod as if it had no claim.
    Scenario: A pod whose claim is still to be generated from its template waits, with kube-controller-manager down
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      When kube-controller-manager is stopped
      And a pod "trainer" with a claim for one "gpu" device is created
      And the scheduler runs
      Then pod "trainer" is not scheduled
      When kube-controller-manager restarts
      And the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And the claim of pod "trainer" is reserved for pod "trainer"

  Rule: KEP-3063/DEVICE-EXCLUSIVE  A device belongs to one claim at a time

    Scenario: The second claim waits until the first pod releases the only device
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And a pod "first" with a claim for one "gpu" device
      When the scheduler runs
      Then pod "first" is bound to node "worker-1"
      When a pod "second" with a claim for one "gpu" device is created
      And the scheduler runs
      Then pod "second" is not scheduled
      And the claim of pod "second" is not allocated
      When pod "first" is deleted
      And the scheduler runs
      Then pod "second" is bound to node "worker-1"
      And the claim of pod "second" is allocated device "gpu-0"

  Rule: KEP-3063/CLAIM-REQUESTS-ON-ONE-NODE  All of a claim's requests are met on the one node the pod gets

    # Both orders of the nodes: a filter that counts each request against a node on its own takes the small node
    # for feasible, and whichever node it then prefers, one order lands the pod there.
    @shape:requests:several
    Scenario Outline: Two requests that each fit on the small node, but not together, go to the big node (small <small>)
      Given node "<small>" has 2 devices "gpu" of driver "gpu.example.com"
      And node "<big>" has 4 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - {name: first, exactly: {deviceClassName: gpu, count: 2}}
            - {name: second, exactly: {deviceClassName: gpu, count: 2}}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then pod "trainer" is bound to node "<big>"
      And claim "pair" is usable only on node "<big>"
      And claim "pair" is allocated devices "gpu-0, gpu-1, gpu-2, gpu-3"

      Examples:
        | small    | big      |
        | worker-1 | worker-2 |
        | worker-2 | worker-1 |
