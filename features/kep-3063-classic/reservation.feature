@kep-3063-classic
Feature: Allocated claims are reserved for their pods within userLimit (KEP-3063 API ReservedFor and UserLimit; kube-scheduler Reserve)

  Background:
    Given a cluster serving the classic DRA API
    And nodes "worker-1, worker-2"
    And the resource class "acme-gpu" of driver "gpu.acme.com"

  Rule: KEP-3063-CLASSIC/RESERVE-RESERVED-FOR  The pod is added to reservedFor before it is bound

    Scenario: A pod using an allocated claim is reserved by UID and bound
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-2: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" is reserved for pod "trainer"
      And pod "trainer" is bound to node "worker-2"

    Scenario: A pod whose claims are not all allocated is reserved in none of them
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And the resource class "acme-fpga" of driver "fpga.acme.com"
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a classic claim "fpga" of class "acme-fpga" with Immediate allocation
      And a pod "trainer" using claims "gpu, fpga"
      When the scheduler runs
      Then claim "gpu" is in phase "Allocated"
      And claim "gpu" is reserved for nobody
      And pod "trainer" is not scheduled

  Rule: KEP-3063-CLASSIC/RESERVE-WITHIN-USER-LIMIT  reservedFor never holds more users than allowed

    Scenario: With the default limit the second pod waits until the first is gone
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "first" using claim "gpu"
      And a pod "second" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" is reserved for pod "first"
      And pod "second" is not scheduled
      When pod "first" is deleted
      And the scheduler runs
      Then claim "gpu" is reserved for pod "second"
      And pod "second" is bound to node "worker-1"

    Scenario: A limit of 2 admits two pods and holds the third
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        user_limit: 2
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "a" using claim "gpu"
      And a pod "b" using claim "gpu"
      And a pod "c" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" is reserved for pods "a, b"
      And pod "c" is not scheduled

  Rule: KEP-3063-CLASSIC/SHARED-CLAIM-ONE-ALLOCATION  Unlimited sharing of one allocation

    Scenario: With userLimit -1 every pod shares the one allocation, which outlives them
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        user_limit: -1
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "a" using claim "gpu"
      And a pod "b" using claim "gpu"
      And a pod "c" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" allows -1 users
      And claim "gpu" is reserved for pods "a, b, c"
      When pod "a" is deleted
      And pod "b" is deleted
      And pod "c" is deleted
      And the scheduler runs
      Then claim "gpu" is reserved for nobody
      And claim "gpu" is in phase "Allocated"

  Rule: KEP-3063-CLASSIC/RESERVED-FOR-BY-UID  Users are told apart by UID

    Scenario: A new pod with a deleted pod's name is a new user
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "worker" using claim "gpu"
      When the scheduler runs
      And pod "worker" is deleted
      And a pod "worker" using claim "gpu" is created
      And the scheduler runs
      Then claim "gpu" is reserved for pod "worker"
      And pod "worker" is bound to node "worker-1"

    # Above, the old pod's entry is gone before the new pod comes, so telling users apart by name passes too.
    # Here an entry of a pod that is gone stays behind (kube-controller-manager, which would drop it, is down):
    # a scheduler matching by name takes it for the new pod's own and binds the pod past userLimit 1.
    Scenario: An entry left by a deleted pod of the same name is not the new pod's reservation
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      When kube-controller-manager is stopped
      And the user updates the status of ResourceClaim "gpu":
        """yaml
        phase: Allocated
        userLimit: 1
        driverName: gpu.acme.com
        reservedFor:
        - {apiVersion: v1, kind: Pod, name: worker, uid: 1b9e2c4a-0000-4000-8000-0000000000aa}
        """
      And a pod "worker" using claim "gpu" is created
      And the scheduler runs
      Then pod "worker" is not scheduled
      And claim "gpu" is reserved only for Pod "worker"

  # The harness plays both schedulers, so this judges the API server; RESERVE-RACE below judges the scheduler.
  Rule: KEP-3063-CLASSIC/RESERVED-FOR-CONFLICT  A reservation written from a stale read is refused

    Scenario: The second scheduler's write from a stale read is refused
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "a" using claim "gpu"
      And a pod "b" using claim "gpu"
      When two schedulers read claim "gpu"
      And the first scheduler reserves its read of the claim for pod "a"
      And the second scheduler reserves its read of the claim for pod "b"
      Then the write is refused with reason "Conflict"
      And claim "gpu" is reserved for pod "a"

  Rule: KEP-3063-CLASSIC/PODS-WITHOUT-CLAIMS-UNAFFECTED  Pods without claims schedule as before

    Scenario: A plain pod is bound at once, whatever the drivers do
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: plain}
        spec:
          containers: [{name: main, image: my-app}]
        """
      When the scheduler runs
      Then pod "plain" is bound to a node

  Rule: KEP-3063-CLASSIC/NO-PERIODIC-WRITES  Nothing keeps writing an allocated claim in use

    Scenario: Ten minutes after the pod was bound its claim is untouched
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      When claim "trainer-res" is watched for updates
      And 10 minutes pass
      Then claim "trainer-res" was not updated

  Rule: KEP-3063-CLASSIC/SKEW-SCHEDULER-WITHOUT-FEATURE  A scheduler without the feature ignores claims

    Scenario: With the gate off in the scheduler the pod is bound and the claim untouched
      Given kube-scheduler with feature gates "DynamicResourceAllocation=off"
      And the classic driver "gpu.acme.com" runs with:
        """yaml
        stalled: true
        """
      And a classic claim "gpu" of class "acme-gpu"
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is bound to a node
      And claim "gpu" has no potential nodes
      And claim "gpu" has no selected node
      And claim "gpu" is reserved for nobody

  Rule: KEP-3063-CLASSIC/CONTAINERS-NOT-USERS  Containers of one pod are one user

    Scenario: Two containers using a claim with userLimit 1 run as one pod
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: pair}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: gpu}]
          containers:
          - {name: workload, image: my-app, resources: {claims: [gpu]}}
          - {name: monitor, image: my-app, resources: {claims: [gpu]}}
        """
      When the scheduler runs
      Then claim "gpu" allows 1 user
      And claim "gpu" is reserved for pod "pair"
      And pod "pair" is bound to node "worker-1"

  Rule: KEP-3063-CLASSIC/NON-POD-USERS  A user that is not a pod counts against the limit

    Scenario: A controller holding the only place keeps pods out
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
        reservedFor:
        - {apiVersion: example.com/v1, kind: Trainer, name: job-7, uid: 1b9e2c4a-0000-4000-8000-000000000007}
        """
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And claim "gpu" is reserved only for Trainer "job-7"

  Rule: KEP-3063-CLASSIC/CLAIM-BEING-DELETED-BLOCKS-POD  A claim on its way out is not handed to new pods

    Scenario: A pod using a claim being deleted is not scheduled
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "first" using claim "gpu"
      When the scheduler runs
      And claim "gpu" is deleted
      And a pod "second" using claim "gpu" is created
      And the scheduler runs
      Then claim "gpu" is being deleted
      And claim "gpu" is reserved for pod "first"
      And pod "second" is not scheduled

    # With userLimit 1 the first pod's reservation alone keeps the second out; here the claim has room for any
    # number of users, so only its deletion does.
    Scenario: A claim being deleted that has room for more users still takes no new pod
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        user_limit: -1
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And a pod "first" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" is reserved for pod "first"
      When claim "gpu" is deleted
      And a pod "second" using claim "gpu" is created
      And the scheduler runs
      Then claim "gpu" is being deleted
      And claim "gpu" is reserved for pod "first"
      And pod "second" is not scheduled

  Rule: KEP-3063-CLASSIC/UNSCHEDULABLE-EXPLAINED  A waiting pod says why, in its condition and an event

    Scenario Outline: A pod waiting because <cause> is marked Unschedulable
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        <behaviour>
        """
      And <claim step>
      And a pod "trainer" using claim "gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled with reason "Unschedulable"
      And a Warning event "FailedScheduling" is recorded for pod "trainer"

      Examples:
        | cause                                  | behaviour                 | claim step                                                                |
        | the claim does not exist               | stalled: true             | the resource class "unused" of driver "gpu.acme.com"                     |
        | the Immediate claim is not allocated   | stalled: true             | a classic claim "gpu" of class "acme-gpu" with Immediate allocation       |
        | the driver is allocating for its node  | stalled: true             | a classic claim "gpu" of class "acme-gpu"                                 |
        | no node has room                       | capacity: {}              | a classic claim "gpu" of class "acme-gpu"                                 |

  Rule: KEP-3063-CLASSIC/RESERVE-RACE  A scheduler that loses the race for a claim neither overwrites nor exceeds the winner's reservation

    # Pod "b" belongs to another scheduler, which reserves the claim for it between this scheduler's read of the
    # claim (Pre-filter) and its write (Reserve). A write conditioned on the read's resourceVersion is refused;
    # the scheduler may then read again and find the claim full, or give up: either way pod "b" keeps it alone.
    Scenario: Another scheduler reserves the claim between the scheduler's read and its write
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
      And the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: b}
        spec:
          schedulerName: another-scheduler
          containers: [{name: main, image: my-app}]
          resourceClaims: [{name: gpu, resourceClaimName: gpu}]
        """
      And another scheduler reserves claim "gpu" for pod "b" just before the scheduler next writes it
      And a pod "a" using claim "gpu"
      When the scheduler runs
      Then claim "gpu" is reserved for pod "b"
      And pod "a" is not scheduled
