@kep-3063-classic
Feature: A classic driver's kubelet plugin (KEP-3063 NodePrepareResource, NodeUnprepareResource and their errors)

  The harness acts as the kubelet and calls the driver's plugin over the seed's one-resource protocol
  (draconform's classic_v1alpha1.proto, docs/decisions.md D-3063-6) on the unix socket the SUT names.

  Background:
    Given a cluster serving the classic DRA API
    And nodes "worker-1, worker-2"
    And the resource class "acme-gpu" of driver "gpu.acme.com"
    And the classic driver "gpu.acme.com" runs with:
      """yaml
      capacity: {worker-1: 2}
      """
    And a classic claim "gpu" of class "acme-gpu" with Immediate allocation
    And a classic claim "other" of class "acme-gpu" with Immediate allocation

  Rule: KEP-3063-CLASSIC/PLUGIN-REGISTRATION-TYPE  The plugin registers as a ResourcePlugin

    Scenario: The registration socket names the driver and the plugin's socket
      When the kubelet on node "worker-1" asks driver "gpu.acme.com" for its plugin registration
      Then the plugin registers with type "ResourcePlugin" and name "gpu.acme.com"
      And the plugin registers the path of its DRAPlugin socket as its endpoint
      And the registration advertises "v1alpha1"

  Rule: KEP-3063-CLASSIC/PLUGIN-PREPARE-CDI-NAMES  A prepared resource is named by CDI device names

    Scenario: Preparing an allocated claim returns fully qualified CDI names
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      Then the classic plugin prepared claim "gpu" with fully qualified CDI device names

  Rule: KEP-3063-CLASSIC/PLUGIN-PREPARE-CDI-FILES  The runtime finds a prepared resource in the node's CDI spec files

    Scenario: The CDI names of a prepared claim are defined on its node
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      Then every CDI device name the classic plugin returned for claim "gpu" is defined in a CDI spec file on node "worker-1"

    Scenario: Unpreparing one claim leaves the spec of the other in place
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "other" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare claim "other" over the classic protocol
      Then every CDI device name the classic plugin returned for claim "gpu" is defined in a CDI spec file on node "worker-1"

  Rule: KEP-3063-CLASSIC/PLUGIN-PREPARE-IDEMPOTENT  Preparing again answers the same

    Scenario: Three prepares of one claim give one answer
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      Then the classic plugin answered claim "gpu" with the same devices each time

  Rule: KEP-3063-CLASSIC/PLUGIN-PREPARE-NOT-FOUND  An unknown resource is NOT_FOUND

    Scenario: A UID the driver never allocated is refused with NOT_FOUND
      When the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare a resource it never knew over the classic protocol
      Then the classic plugin refused to prepare the resource it never knew with "NOT_FOUND"

    Scenario: A claim allocated for another node is refused, but not as NOT_FOUND
      When the scheduler runs
      And the kubelet on node "worker-2" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      Then the classic plugin refused to prepare claim "gpu" with "FAILED_PRECONDITION"

  Rule: KEP-3063-CLASSIC/PLUGIN-UNPREPARE-UNDOES  Unprepare undoes prepare

    Scenario: After unprepare the claim can be prepared afresh
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      Then the classic plugin unprepared claim "gpu" each time it was asked
      And the classic plugin answered claim "gpu" with the same devices each time

    # Above the second prepare gets the answer the first did, which a plugin that ignores unprepare gives as
    # well. Here the claim moves to worker-2 in between: a first prepare on worker-1 would be refused.
    Scenario: After unprepare, a claim allocated elsewhere meanwhile is refused as on a first prepare
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare claim "gpu" over the classic protocol
      And the classic driver "gpu.acme.com" is reconfigured with:
        """yaml
        capacity: {worker-2: 2}
        """
      And the scheduler sets the phase of claim "gpu" to "Reallocate"
      And the scheduler runs
      Then claim "gpu" is available only on node "worker-2"
      When the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      Then the classic plugin unprepared claim "gpu" each time it was asked
      And the classic plugin refused to prepare claim "gpu" with "FAILED_PRECONDITION"

  Rule: KEP-3063-CLASSIC/PLUGIN-UNPREPARE-IDEMPOTENT  Unpreparing again, or what was never prepared, is OK

    Scenario: Two unprepares after one prepare both succeed
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to prepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare claim "gpu" over the classic protocol
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare claim "gpu" over the classic protocol
      Then the classic plugin unprepared claim "gpu" each time it was asked

    Scenario: Unpreparing a known claim that was never prepared on the node succeeds
      When the scheduler runs
      And the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare claim "other" over the classic protocol
      Then the classic plugin unprepared claim "other" each time it was asked

  Rule: KEP-3063-CLASSIC/PLUGIN-UNPREPARE-NOT-FOUND  Only a resource the driver never knew is NOT_FOUND

    Scenario: Unpreparing a UID no driver ever had is refused with NOT_FOUND
      When the kubelet on node "worker-1" asks driver "gpu.acme.com" to unprepare a resource it never knew over the classic protocol
      Then the classic plugin refused to unprepare the resource it never knew with "NOT_FOUND"
