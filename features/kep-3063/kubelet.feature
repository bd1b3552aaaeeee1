@kubelet
Feature: The kubelet prepares a pod's claims through the driver's kubelet plugin before the pod runs, and releases them after

  The driver under test is "gpu.example.com" with two GPUs on node "node-1"; the kubelet of that node is the
  component under test. What the plugin was asked is read from the calls its socket received.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1" of class "gpu" on node "node-1"

  Rule: KEP-3063/KUBELET-UNRESERVED-POD-NOT-RUN  A pod not in reservedFor of its claims, or whose claim is missing, does not run

    Scenario: A pod bound to the node while its allocated claim is reserved for someone else stays Pending
      Given a claim "model" for one "gpu" device
      And the status of claim "model" is:
        """yaml
        reservedFor:
        - {apiGroup: batch, resource: jobs, name: trainer-job, uid: 0b6c3f7e-2d4a-4c8e-9f1b-5a7d9e3c2b10}
        allocation:
          devices:
            results:
            - {request: device, driver: gpu.example.com, pool: node-1, device: gpu-0}
          nodeSelector:
            nodeSelectorTerms:
            - matchFields:
              - {key: metadata.name, operator: In, values: [node-1]}
        """
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          nodeName: node-1
          containers: [{name: main, image: registry.k8s.io/pause:3.10}]
          resourceClaims: [{name: gpu, resourceClaimName: model}]
        """
      When the scheduler runs
      Then pod "trainer" is Pending
      And a Warning event "FailedPrepareDynamicResources" is recorded for pod "trainer"
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" never

    Scenario: A pod bound to the node whose claim does not exist stays Pending until it is reserved
      Given the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          nodeName: node-1
          containers: [{name: main, image: registry.k8s.io/pause:3.10}]
          resourceClaims: [{name: gpu, resourceClaimName: model}]
        """
      When the scheduler runs
      Then pod "trainer" is Pending
      And a Warning event "FailedPrepareDynamicResources" is recorded for pod "trainer"
      When claim "model" for one "gpu" device is created
      And the scheduler runs
      Then pod "trainer" is Pending
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" never

    Scenario: The same pod, scheduled by the scheduler, is reserved and runs
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then claim "model" is reserved for pod "trainer"
      And pod "trainer" is Running
      And no event "FailedPrepareDynamicResources" is recorded for pod "trainer"

  Rule: KEP-3063/KUBELET-PREPARE-BEFORE-START  Claims are prepared before the pod runs, and unprepared after its last pod on the node

    Scenario: The pod runs once the plugin prepared its claim
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" once
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" never

    Scenario: While the plugin fails to prepare the claim, the pod does not run
      Given the plugin of driver "gpu.example.com" on node "node-1" fails to prepare transiently
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" once
      When 10 minutes pass
      Then pod "trainer" is Pending

    Scenario: A claim shared by two pods on the node is unprepared only after the second one goes
      Given a claim "shared" for one "gpu" device
      And a pod "first" using claim "shared"
      And a pod "second" using claim "shared"
      When the scheduler runs
      Then pod "first" is Running
      And pod "second" is Running
      When pod "first" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "shared" never
      And claim "shared" is reserved for pod "second"
      When pod "second" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "shared" at least once
      And claim "shared" is reserved for nobody

    Scenario: A pod that finishes has its claim unprepared
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And pod "trainer" finishes with phase "Succeeded"
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least once
      And claim "model" is reserved for nobody

  Rule: KEP-3063/KUBELET-RETRY-WITH-BACKOFF  Failed and uncertain prepares are retried until one succeeds

    # How soon is not judged: the KEP asks for growing intervals only after NOT_FOUND (KUBELET-RETRY-NOT-FOUND),
    # and upstream's kubelet retries about every 10 s.
    Scenario: Three transient failures, retried, then the pod runs
      Given the plugin of driver "gpu.example.com" on node "node-1" fails to prepare transiently 3 times
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 2 minutes pass
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" 4 times

    @realtime
    Scenario: A plugin that does not answer before the call's deadline is asked again
      # Real seconds: a gRPC deadline is the call's own. The hung call never answers before the scenario ends, so
      # the deadline passes whatever the load. A later call that a loaded machine slows past the deadline is
      # asked again too, as the rule says, so the scenario counts at least two calls, not exactly two.
      Given the kubelet waits at most 3 seconds for a plugin call
      And the plugin of driver "gpu.example.com" on node "node-1" hangs on prepare 1 time
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 1 minute passes
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" at least 2 times

    Scenario: A plugin that crashes in the middle of the call is asked again
      Given the plugin of driver "gpu.example.com" on node "node-1" crashes during prepare 1 time
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 1 minute passes
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" twice

  Rule: KEP-3063/KUBELET-RELEASE-AFTER-UNPREPARE  A deleted pod leaves reservedFor only after its claim is unprepared

    # Four failures keep the claim reserved for 15 s of backoff (1+2+4+8 s), long enough for a live cluster's
    # Then step to see it even on a busy machine; two failures gave it only 3 s.
    Scenario: While unprepare fails, the claim stays reserved for the deleted pod
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Running
      When the plugin of driver "gpu.example.com" on node "node-1" fails to unprepare transiently 4 times
      And pod "trainer" is deleted
      And the scheduler runs
      Then claim "model" is reserved for pod "trainer"
      And claim "model" is allocated one of devices "gpu-0, gpu-1"
      When 1 minute passes
      Then claim "model" is reserved for nobody
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least 5 times
      And pod "trainer" does not exist

  Rule: KEP-3063/KUBELET-UNPREPARE-EACH-PREPARE  What the kubelet prepared is unprepared once its pods are gone, across a kubelet restart

    # A restarted kubelet may ask to prepare a running pod's claim again (prepare is idempotent), so the calls to
    # prepare are counted as at least one.
    Scenario: A restarted kubelet keeps a running pod's claim prepared, and unprepares it when the pod goes
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And kubelet restarts
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" at least once
      When pod "trainer" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least once
      And pod "trainer" does not exist

    # The second pod joins a claim already prepared, so no call records it: a kubelet that writes its checkpoint
    # only when it calls the plugin passes the scenario above and, once restarted, unprepares under the second pod.
    Scenario: After a kubelet restart a claim two running pods share is unprepared only once both are gone
      Given a claim "shared" for one "gpu" device
      And a pod "first" using claim "shared"
      And a pod "second" using claim "shared"
      When the scheduler runs
      And kubelet restarts
      Then pod "first" is Running
      And pod "second" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "shared" at least once
      When pod "first" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "shared" never
      And claim "shared" is reserved for pod "second"
      When pod "second" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "shared" at least once
      And claim "shared" is reserved for nobody

  Rule: KEP-3063/KUBELET-FEATURE-OFF  A kubelet without the feature starts the pod without its resources

    # DynamicResourceAllocation is locked on from 1.35 (a kubelet told otherwise does not start): 1.34 is the last
    # kubelet that can run without it.
    Scenario: With DynamicResourceAllocation off the kubelet runs the pod and prepares nothing
      Given kubelet version "1.34" with feature gates "DynamicResourceAllocation=off"
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" never

  Rule: KEP-3063/KUBELET-RETRY-NOT-FOUND  A prepare call failing with NOT_FOUND is retried with back off too

    Scenario: Three NOT_FOUND answers, retried at growing intervals, then the pod runs
      Given the plugin of driver "gpu.example.com" on node "node-1" answers prepare with NOT_FOUND 3 times
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 2 minutes pass
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" 4 times
      And the calls to prepare claim "model" on driver "gpu.example.com" on node "node-1" came at growing intervals

  Rule: KEP-3063/KUBELET-UNPREPARE-UNDOES-PREPARE  Unpreparing a claim takes away what preparing it set up

    Scenario: The CDI devices defined for a claim go when it is unprepared, those of a claim still in use stay
      Given a claim "other" for one "gpu" device
      And a pod "helper" using claim "other"
      When the scheduler runs
      Then pod "helper" is Running
      When the CDI devices defined on node "node-1" are noted as "before"
      And claim "model" for one "gpu" device is created
      And a pod "trainer" using claim "model" is created
      And the scheduler runs
      Then pod "trainer" is Running
      When pod "trainer" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least once
      And node "node-1" defines exactly the CDI devices noted as "before"
      And pod "helper" is Running

  Rule: KEP-3063/KUBELET-UNPREPARE-FAILURE-REPORTED  A failed teardown is an error: the claim stays held until it succeeds

    Scenario: While the plugin cannot tear the claim down, its CDI devices and the reservation stay
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the CDI devices defined on node "node-1" are noted as "before"
      And the scheduler runs
      Then pod "trainer" is Running
      When the CDI devices defined on node "node-1" are noted as "prepared"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to unprepare transiently 4 times
      And pod "trainer" is deleted
      And the scheduler runs
      Then claim "model" is reserved for pod "trainer"
      And node "node-1" defines exactly the CDI devices noted as "prepared"
      When 1 minute passes
      Then claim "model" is reserved for nobody
      And node "node-1" defines exactly the CDI devices noted as "before"
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least 5 times

  Rule: KEP-3063/KUBELET-REFUSES-UNOWNED-CLAIM  A template entry's claim the pod does not own is not used

    Scenario: A pod whose template entry names a claim the pod does not own stays Pending and nothing is prepared
      Given a claim "trainer-gpu" for one "gpu" device
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          nodeName: node-1
          containers: [{name: main, image: registry.k8s.io/pause:3.10}]
          resourceClaims: [{name: gpu, resourceClaimTemplateName: no-such-template}]
        """
      When the status of pod "trainer" names claim "trainer-gpu" for its entry "gpu"
      And claim "trainer-gpu" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1" and reserved for pod "trainer"
      Then pod "trainer" is Pending
      And a Warning event "FailedPrepareDynamicResources" is recorded for pod "trainer"
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "trainer-gpu" never

    Scenario: The same pod reaching its claim by name runs with it
      Given a claim "trainer-gpu" for one "gpu" device
      And the Pod:
        """yaml
        metadata: {name: trainer}
        spec:
          nodeName: node-1
          containers: [{name: main, image: registry.k8s.io/pause:3.10}]
          resourceClaims: [{name: gpu, resourceClaimName: trainer-gpu}]
        """
      When claim "trainer-gpu" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1" and reserved for pod "trainer"
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "trainer-gpu" once

  Rule: KEP-3063/KUBELET-GATE-OFF-KEEPS-RUNNING-PODS  Turning the feature off leaves running pods and their claims alone

    # A 1.34 kubelet: the last that lets the gate be turned off (it is locked on from 1.35).
    Scenario: After a kubelet restart with DynamicResourceAllocation off the running pod keeps running and its claim
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Running
      When kubelet restarts as version "1.34" with feature gates "DynamicResourceAllocation=off"
      And 10 minutes pass
      Then pod "trainer" is Running
      And claim "model" is reserved for pod "trainer"
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" never

  Rule: KEP-3063/KUBELET-SKEW-OLD-NODE  A kubelet of a release without the feature starts the pod without its resources

    Scenario: A node whose kubelet predates dynamic resource allocation runs the pod and prepares nothing
      Given kubelet is "old" (DynamicResourceAllocation)
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" never

  Rule: KEP-3063/DRIVER-UPGRADE-KEEPS-CLAIMS  A driver restarted as another version keeps its prepared claims working

    Scenario: A downgrade and an upgrade of the driver leave the running pod alone, and its claim is torn down once
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the CDI devices defined on node "node-1" are noted as "before"
      And the scheduler runs
      Then pod "trainer" is Running
      When the CDI devices defined on node "node-1" are noted as "prepared"
      And dra-driver restarts as "old" (DRAHandlePermanentDriverFailures)
      And dra-driver restarts as "new, gate on" (DRAHandlePermanentDriverFailures)
      And 1 minute passes
      Then pod "trainer" is Running
      And node "node-1" defines exactly the CDI devices noted as "prepared"
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" once
      When pod "trainer" is deleted
      And the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least once
      And node "node-1" defines exactly the CDI devices noted as "before"
      And pod "trainer" does not exist
