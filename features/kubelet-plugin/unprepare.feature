@kubelet-plugin
Feature: A DRA driver's kubelet plugin unprepares claims when the kubelet asks (DRAPlugin NodeUnprepareResources)

  The driver under test is "gpu.example.com", with three GPUs on node "node-1". The harness plays the
  kubelet on that node over the plugin's DRAPlugin socket (v1). Like a real kubelet it remembers the
  claims it asked about, so it can still unprepare a claim the API server has already deleted.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1", "gpu-2" of class "gpu" on node "node-1"

  Rule: DRA-PLUGIN/ANSWER-EVERY-CLAIM  Every claim asked about gets an entry in the answer, keyed by its UID

    Scenario: The two claims of a pod, unprepared in one call, get an entry each
      Given a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "model", "scratch" in one call
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claims "model", "scratch" in one call
      Then the driver answered every claim it was asked about, by UID
      And the driver unprepared claim "model"
      And the driver unprepared claim "scratch"

  Rule: DRA-PLUGIN/UNPREPARE-AFTER-PREPARE  Unpreparing undoes preparing, and needs no ResourceClaim to do it

    Scenario: A prepared claim is unprepared, and can be prepared again afterwards
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "trainer"
      Then the driver unprepared the claim of pod "trainer"
      # Another pod on the node that uses the same claim starts later.
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer"
      Then the driver prepared the claim of pod "trainer" with the same devices each time it was asked

    Scenario: A claim is unprepared after the API server has deleted it
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer"
      # The pod was force-deleted: its generated claim goes before the kubelet has unprepared it.
      And pod "trainer" is deleted
      And the scheduler runs
      Then the claims generated for pod "trainer" are gone
      When the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "trainer"
      Then the driver unprepared the claim of pod "trainer"

  Rule: DRA-PLUGIN/UNPREPARE-IDEMPOTENT  Unpreparing an unprepared claim succeeds again

    Scenario: The kubelet unprepares a claim twice and both calls succeed
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "trainer"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "trainer"
      Then the driver unprepared the claim of pod "trainer" each time it was asked

  Rule: DRA-PLUGIN/UNPREPARE-UNKNOWN  Unpreparing a claim the plugin never prepared succeeds

    Scenario: An allocated claim the plugin was never asked to prepare
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare the claim of pod "trainer"
      Then the driver unprepared the claim of pod "trainer"

    Scenario: A claim whose preparation the plugin refused
      Given a claim "idle" for one "gpu" device
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "idle"
      Then the driver refused to prepare claim "idle"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "idle"
      Then the driver unprepared claim "idle"

    Scenario: A claim the API server does not have
      When the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "ghost" with UID "4f7b2c1e-5a3d-4e8f-9b60-0c1d2e3f4a51"
      Then the driver unprepared claim "ghost"

  # The claims below are allocated by a status the scenario writes, as a scheduler left it: no pod uses them, so
  # no kubelet of the cluster prepares them before the harness asks, and the spec files their preparation writes
  # appear between the notes.

  Rule: DRA-PLUGIN/CDI-SPECS-REMOVED  Unpreparing a claim removes the CDI spec files its preparation wrote

    Scenario: The spec files written to prepare a claim are gone once it is unprepared
      Given a claim "model" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      When the CDI spec files on node "node-1" are noted as "before"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the CDI spec files on node "node-1" are noted as "prepared"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "model"
      Then the driver unprepared claim "model"
      And the CDI spec files that appeared on node "node-1" between "before" and "prepared" are gone

  Rule: DRA-PLUGIN/SURVIVES-RESTART  A restart between prepare and unprepare loses nothing the plugin prepared

    Scenario: A claim prepared before the plugin restarts is unprepared after it, and then prepared as before
      Given a claim "model" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And dra-driver restarts
      # As after a plugin restart on a node: the kubelet unprepares what its pods no longer use, then prepares
      # the claim again for a new pod.
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "model"
      Then the driver unprepared claim "model"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver prepared claim "model" with the same devices each time it was asked

    # Whether the driver removes its spec files at all is DRA-PLUGIN/CDI-SPECS-REMOVED's question: they are judged
    # here only if the driver removed them when unprepared without a restart.
    Scenario: The spec files written before the plugin restarts are gone once the claim is unprepared after it
      Given a claim "model" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      When the CDI spec files on node "node-1" are noted as "start"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the CDI spec files on node "node-1" are noted as "first prepared"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "model"
      And the CDI spec files on node "node-1" are noted as "unprepared"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the CDI spec files on node "node-1" are noted as "prepared"
      And dra-driver restarts
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "model"
      Then the driver unprepared claim "model"
      And the CDI spec files that appeared on node "node-1" between "unprepared" and "prepared" are gone, if those between "start" and "first prepared" were gone at "unprepared"
