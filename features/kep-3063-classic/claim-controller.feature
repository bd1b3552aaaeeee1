@kep-3063-classic
Feature: kube-controller-manager makes claims from a pod's templates (KEP-3063 kube-controller-manager, PodResourceClaim.Template)

  Background:
    Given a cluster serving the classic DRA API
    And a node "worker-1"
    And the resource class "acme-gpu" of driver "gpu.acme.com"

  Rule: KEP-3063-CLASSIC/TEMPLATE-CLAIM-CREATED  A template entry becomes the claim <pod>-<entry>

    Scenario: The claim is named after pod and entry and carries the template's spec, labels and annotations
      Given the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: trainer}
        spec:
          containers: [{name: main, image: my-app, resources: {claims: [gpu]}}]
          resourceClaims:
          - name: gpu
            template:
              metadata: {labels: {team: ml}, annotations: {purpose: trial}}
              spec: {resourceClassName: acme-gpu, allocationMode: Immediate, parameters: {memory: 2Gi}}
        """
      When the scheduler runs
      Then the ResourceClaim "trainer-gpu" has:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        kind: ResourceClaim
        metadata:
          name: trainer-gpu
          namespace: default
          labels: {team: ml}
          annotations: {purpose: trial}
        spec: {resourceClassName: acme-gpu, allocationMode: Immediate, parameters: {memory: 2Gi}}
        """

    Scenario: Each template entry of a pod gets its own claim
      Given a pod "pair" with template claims of classes "acme-gpu", "acme-gpu"
      When the scheduler runs
      Then claim "pair-res" is in phase "Pending"
      And claim "pair-res-1" is in phase "Pending"

  Rule: KEP-3063-CLASSIC/TEMPLATE-CLAIM-OWNED  The pod owns its generated claim, which goes with it

    Scenario: The generated claim is owned by the pod and deleted with it
      Given a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" has one generated claim owned by the pod
      When pod "trainer" is deleted
      And the scheduler runs
      Then claim "trainer-res" does not exist

  Rule: KEP-3063-CLASSIC/UNOWNED-CLAIM-BLOCKS-POD  A claim of that name the pod does not own is never used

    Scenario: A stranger's claim blocks the pod until it is removed
      Given a classic claim "trainer-res" of class "acme-gpu"
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then pod "trainer" is not scheduled
      And the stored ResourceClaim "trainer-res" has no field "metadata.ownerReferences"
      When claim "trainer-res" is deleted
      And the scheduler runs
      Then pod "trainer" has one generated claim owned by the pod

    # A stranger's Delayed claim with no driver at work never gets allocated, so a scheduler that used it would
    # leave the pod unbound all the same: here the stranger's claim is allocated and has room.
    Scenario: A stranger's allocated claim of the generated name is not reserved for the pod
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a classic claim "trainer-res" of class "acme-gpu" with Immediate allocation
      And a pod "trainer" with template claim of class "acme-gpu"
      When the scheduler runs
      Then claim "trainer-res" is in phase "Allocated"
      And claim "trainer-res" is reserved for nobody
      And pod "trainer" is not scheduled
      And the stored ResourceClaim "trainer-res" has no field "metadata.ownerReferences"

  Rule: KEP-3063-CLASSIC/ADOPTED-CLAIM-USED  A hand-made claim owned by the pod is used as is

    Scenario: A claim given an owner reference to the pod is taken, not replaced
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a pod "rebuilt" with template claim of class "acme-gpu"
      And the ResourceClaim "rebuilt-res" owned by pod "rebuilt":
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        spec: {resourceClassName: acme-gpu, parameters: {restoredFrom: backup}}
        """
      And the UID of ResourceClaim "rebuilt-res" is noted
      When the scheduler runs
      Then pod "rebuilt" is bound to node "worker-1"
      And the stored ResourceClaim "rebuilt-res" has field "spec.parameters" set to {restoredFrom: backup}
      And ResourceClaim "rebuilt-res" is still the object whose UID was noted

  Rule: KEP-3063-CLASSIC/TEMPLATE-CLAIM-NOT-CHANGED  A generated claim's spec is not rewritten from the template

    # The claim's spec differs from the template (a claim made for the pod before the controller saw it). The API
    # server refuses an update of a claim's spec, so a controller bent on the template's spec can only delete the
    # claim and create it again: its UID and spec then change, which is what is judged (by the object, not by a
    # metric the rule does not name).
    Scenario: The controller leaves an existing generated claim's spec alone
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        """
      And a pod "trainer" with template claim of class "acme-gpu"
      And the ResourceClaim "trainer-res" owned by pod "trainer":
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        spec: {resourceClassName: acme-gpu, parameters: {restoredFrom: backup}}
        """
      And the UID of ResourceClaim "trainer-res" is noted
      When the scheduler runs
      And pod "trainer" is relabelled with "rerun=yes"
      And the scheduler runs
      Then ResourceClaim "trainer-res" is still the object whose UID was noted
      And the stored ResourceClaim "trainer-res" has field "spec" set to {resourceClassName: acme-gpu, allocationMode: Delayed, parameters: {restoredFrom: backup}}

  Rule: KEP-3063-CLASSIC/CLAIM-CREATE-RETRIED  Failed creates are retried

    Scenario: A create refused by the driver's webhook succeeds once the class exists
      Given a driver webhook that refuses claims of classes that do not exist
      And a pod "early" with template claim of class "acme-fpga"
      When the scheduler runs
      Then pod "early" is not scheduled
      And claim "early-res" does not exist
      When the resource class "acme-fpga" of driver "fpga.acme.com" is created
      And 1 minute passes
      Then claim "early-res" is in phase "Pending"

    # The first retry after the class appears succeeds above, so a controller that gives up after a few
    # attempts passes there; here the class comes only after ten minutes of refusals. The pod is placed on
    # its node by hand: kube-scheduler's writes to a waiting pod would bring it back to the controller anyway.
    Scenario: A create refused for ten minutes is still retried and succeeds once the class exists
      Given a driver webhook that refuses claims of classes that do not exist
      And the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: early}
        spec:
          nodeName: worker-1
          resourceClaims: [{name: res, template: {spec: {resourceClassName: acme-fpga}}}]
          containers: [{name: main, image: my-app, resources: {claims: [res]}}]
        """
      When the scheduler runs
      And 10 minutes pass
      Then claim "early-res" does not exist
      When the resource class "acme-fpga" of driver "fpga.acme.com" is created
      And 5 minutes pass
      Then claim "early-res" is in phase "Pending"

  Rule: KEP-3063-CLASSIC/CONTROLLER-METRICS  Creates and failed creates are counted

    Scenario: One failure then one success are counted apart
      Given a driver webhook that refuses claims of classes that do not exist
      And a pod "early" with template claim of class "acme-fpga"
      When the scheduler runs
      Then the metric "resource_controller_create_failures_total" is at least 1
      And the metric "resource_controller_create_total" is 0
      When the resource class "acme-fpga" of driver "fpga.acme.com" is created
      And 1 minute passes
      Then the metric "resource_controller_create_total" is 1

    Scenario: A pod using only a named claim creates nothing
      Given a classic claim "shared" of class "acme-gpu"
      And a pod "reader" using claim "shared"
      When the scheduler runs
      Then the metric "resource_controller_create_total" is 0
      And the metric "resource_controller_create_failures_total" is 0

  Rule: KEP-3063-CLASSIC/RESERVED-FOR-GC  Reservations of pods that are gone are dropped

    Scenario: A deleted pod's entry leaves a shared claim's reservedFor
      Given the classic driver "gpu.acme.com" runs with:
        """yaml
        capacity: {worker-1: 1}
        user_limit: -1
        """
      And a classic claim "shared" of class "acme-gpu" with Immediate allocation
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      Then claim "shared" is reserved for pods "reader, writer"
      When pod "reader" is deleted
      And the scheduler runs
      Then claim "shared" is reserved for pod "writer"
