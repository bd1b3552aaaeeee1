@kep-3063-classic
Feature: The kubelet prepares classic claims before a pod runs and unprepares them after (KEP-3063 kubelet)

  The kubelet calls the driver's kubelet plugin over the seed's one-resource protocol
  (classic_v1alpha1.proto); the calls the plugin received are read from the SUT.

  Background:
    Given a cluster serving the classic DRA API
    And nodes "worker-1, worker-2"
    And the resource class "acme-gpu" of driver "gpu.acme.com"
    And the classic driver "gpu.acme.com" runs with:
      """yaml
      capacity: {worker-1: 2}
      user_limit: -1
      """

  Rule: KEP-3063-CLASSIC/KUBELET-PREPARE-BEFORE-START  Prepared once per node, before the pod runs

    Scenario: A scheduled pod runs after its claim was prepared
      Given a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And pod "trainer" is Running
      And driver "gpu.acme.com" on node "worker-1" was asked to prepare claim "trainer-res" once

    Scenario: Two pods sharing a claim on one node cause one prepare
      Given a classic claim "shared" of class "acme-gpu" with Immediate allocation
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      Then pod "reader" is Running
      And pod "writer" is Running
      And driver "gpu.acme.com" on node "worker-1" was asked to prepare claim "shared" once

  Rule: KEP-3063-CLASSIC/KUBELET-UNRESERVED-POD-NOT-RUN  A pod not in reservedFor does not run

    Scenario: A pod placed on the node by hand, never reserved, stays Pending with an event
      Given a classic claim "shared" of class "acme-gpu" with Immediate allocation
      And the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: squatter}
        spec:
          nodeName: worker-1
          resourceClaims: [{name: gpu, resourceClaimName: shared}]
          containers: [{name: main, image: my-app, resources: {claims: [gpu]}}]
        """
      When the scheduler runs
      Then pod "squatter" is Pending
      And a Warning event "ResourceClaimNotReserved" or "FailedPrepareDynamicResources" is recorded for pod "squatter"
      And driver "gpu.acme.com" on node "worker-1" was asked to prepare claim "shared" never

    # Above the claim is reserved for nobody, so a kubelet that runs a pod once reservedFor lists anyone passes
    # too; here the claim is reserved for the pod the scheduler placed, and the hand-placed one still waits.
    Scenario: A pod placed by hand beside the pod a shared claim is reserved for stays Pending
      Given a classic claim "shared" of class "acme-gpu" with Immediate allocation
      And a pod "reader" using claim "shared"
      And the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: squatter}
        spec:
          nodeName: worker-1
          resourceClaims: [{name: gpu, resourceClaimName: shared}]
          containers: [{name: main, image: my-app, resources: {claims: [gpu]}}]
        """
      When the scheduler runs
      Then pod "reader" is Running
      And claim "shared" is reserved for pod "reader"
      And pod "squatter" is Pending
      And a Warning event "ResourceClaimNotReserved" or "FailedPrepareDynamicResources" is recorded for pod "squatter"

  Rule: KEP-3063-CLASSIC/KUBELET-MISSING-CLAIM-NOT-RUN  A pod whose claim does not exist does not run

    Scenario: A pod placed on the node by hand with a missing claim stays Pending with an event
      Given the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: orphan}
        spec:
          nodeName: worker-1
          resourceClaims: [{name: gpu, resourceClaimName: nowhere}]
          containers: [{name: main, image: my-app}]
        """
      When the scheduler runs
      Then pod "orphan" is Pending
      And a Warning event "ResourceClaimNotFound" or "FailedPrepareDynamicResources" is recorded for pod "orphan"

  Rule: KEP-3063-CLASSIC/KUBELET-UNPREPARE-AFTER-LAST-POD  Unprepared once the last pod on the node is gone

    Scenario: The claim is unprepared only when its second pod goes
      Given a classic claim "shared" of class "acme-gpu" with Immediate allocation
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      And pod "reader" is deleted
      And the scheduler runs
      Then driver "gpu.acme.com" on node "worker-1" was asked to unprepare claim "shared" never
      And pod "writer" is Running
      When pod "writer" is deleted
      And the scheduler runs
      Then driver "gpu.acme.com" on node "worker-1" was asked to unprepare claim "shared" at least once
      And pod "writer" does not exist

    Scenario: A finished pod's claim is unprepared though the pod object stays
      Given a pod "job" with template claim of class "acme-gpu"
      When the scheduler runs
      And pod "job" finishes with phase "Succeeded"
      And the scheduler runs
      Then driver "gpu.acme.com" on node "worker-1" was asked to unprepare claim "job-res" at least once
      And claim "job-res" is reserved for nobody

  Rule: KEP-3063-CLASSIC/KUBELET-UNRESERVE-ON-DELETE  Unprepare, then leave reservedFor, then the pod goes

    Scenario: While unprepare fails the deleted pod stays reserved; after it succeeds both go
      Given a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      And the plugin of driver "gpu.acme.com" on node "worker-1" fails to unprepare transiently 2 times
      And pod "trainer" is deleted
      And the scheduler runs
      Then claim "trainer-res" is reserved for pod "trainer"
      When 10 seconds pass
      Then pod "trainer" does not exist
      And driver "gpu.acme.com" on node "worker-1" was asked to unprepare claim "trainer-res" at least 3 times

    # The kubelet's own write: kube-controller-manager also drops reservations of pods that no longer exist,
    # so with it running a kubelet that leaves the entry behind is repaired and passes.
    Scenario: With kube-controller-manager down, the kubelet itself takes the deleted pod out of reservedFor
      Given a classic claim "shared" of class "acme-gpu" with Immediate allocation
      And a pod "reader" using claim "shared"
      When the scheduler runs
      Then pod "reader" is Running
      When kube-controller-manager is stopped
      And pod "reader" is deleted
      Then pod "reader" does not exist
      And claim "shared" is reserved for nobody

  Rule: KEP-3063-CLASSIC/KUBELET-PREPARE-FAILURE-RETRIED  A failed prepare is retried with back-off

    Scenario: Two failed prepares, then the pod runs
      Given the plugin of driver "gpu.acme.com" on node "worker-1" fails to prepare transiently 2 times
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" is Pending
      And a Warning event "FailedPrepareResource" or "FailedPrepareDynamicResources" is recorded for pod "trainer"
      When 10 seconds pass
      Then pod "trainer" is Running
      And driver "gpu.acme.com" on node "worker-1" was asked to prepare claim "trainer-res" 3 times

    # Above, a kubelet retrying at a fixed interval gets the pod running within the ten seconds as well; the
    # back-off shows only in when the retries come.
    Scenario: Three failed prepares are retried at growing intervals, then the pod runs
      Given the plugin of driver "gpu.acme.com" on node "worker-1" fails to prepare transiently 3 times
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      And 1 minute passes
      Then pod "trainer" is Running
      And driver "gpu.acme.com" on node "worker-1" was asked to prepare claim "trainer-res" 4 times
      And the calls to prepare claim "trainer-res" on driver "gpu.acme.com" on node "worker-1" came at growing intervals

  Rule: KEP-3063-CLASSIC/KUBELET-SKEW-STARTS-WITHOUT-RESOURCES  Without the feature the pod starts unprepared

    Scenario: A kubelet with the gate off starts the pod and calls no plugin
      Given kubelet with feature gates "DynamicResourceAllocation=off"
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" is bound to node "worker-1"
      And pod "trainer" is Running
      And driver "gpu.acme.com" on node "worker-1" was asked to prepare claim "trainer-res" never
