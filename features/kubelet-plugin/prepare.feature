@kubelet-plugin
Feature: A DRA driver's kubelet plugin prepares claims when the kubelet asks (DRAPlugin NodePrepareResources)

  The driver under test is "gpu.example.com", with three GPUs on node "node-1". The harness plays the
  kubelet on that node: it calls the plugin's DRAPlugin service over gRPC on the unix socket the system
  under test names, in DRAPlugin v1 unless a step names another version, and judges the answers. Claims are
  allocated the normal way, by the scheduler for the pods that use them; a claim no pod uses stays
  unallocated.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1", "gpu-2" of class "gpu" on node "node-1"

  Rule: DRA-PLUGIN/ANSWER-EVERY-CLAIM  Every claim asked about gets an entry in the answer, keyed by its UID

    @shape:claims:several
    Scenario: The two claims of a pod, prepared in one call, get an entry each
      Given a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "model", "scratch" in one call
      Then the driver answered every claim it was asked about, by UID

  Rule: DRA-PLUGIN/ANSWER-ONLY-ASKED  The answer has entries only under the UIDs of the claims asked about

    # The node's kubelet prepared both claims of the pod before the harness asks: the plugin holds "model"
    # while it answers the call about "scratch", and must not add it to that answer.
    Scenario: A claim prepared in an earlier call is left out of the answer about another claim
      Given a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "scratch"
      Then the driver answered only the claims it was asked about

  Rule: DRA-PLUGIN/CLAIMS-INDEPENDENT  A refused claim does not keep the plugin from preparing the others in the call

    # A plugin built on upstream's helper refuses the whole call for a claim it cannot read from the API server;
    # then the claim it can prepare is asked about on its own (docs/decisions.md D-3063-8).

    Scenario: A claim that is not allocated, asked about first, does not stop the claim after it
      Given a claim "idle" for one "gpu" device
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "idle", "model" in one call
      Then the driver refused to prepare claim "idle"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model" on its own if it refused that call as a whole
      Then the devices the driver prepared for claim "model" are those of its allocation

    # Above, the node's kubelet prepared claim "model" before the harness asks, so the plugin may answer it from
    # its checkpoint. Here a kubelet without DRA prepares nothing: the plugin does the work after the refusal (1.34 is
    # the last kubelet that lets DynamicResourceAllocation be turned off).
    Scenario: A claim the plugin has not prepared before, asked about after a refused one, is prepared in that call
      Given kubelet version "1.34" with feature gates "DynamicResourceAllocation=off"
      And a claim "idle" for one "gpu" device
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" never
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "idle", "model" in one call
      Then the driver refused to prepare claim "idle"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model" on its own if it refused that call as a whole
      Then the devices the driver prepared for claim "model" are those of its allocation

  Rule: DRA-PLUGIN/PER-CLAIM-ERRORS  A claim the plugin cannot prepare is refused, in its entry or by failing the call, and the plugin goes on serving

    Scenario Outline: A claim <case> is refused in its entry, and the next call succeeds
      Given a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      And a claim "idle" for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare <claim>
      Then the driver refused to prepare claim "<name>"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the devices the driver prepared for claim "model" are those of its allocation

      Examples:
        | case                                     | claim                                                         | name  |
        | the API server does not have             | claim "ghost" with UID "4f7b2c1e-5a3d-4e8f-9b60-0c1d2e3f4a51" | ghost |
        | whose UID is not the one the kubelet has | claim "model" with UID "4f7b2c1e-5a3d-4e8f-9b60-0c1d2e3f4a52" | model |
        | that is not allocated                    | claim "idle"                                                  | idle  |

    # Above, the node's kubelet has prepared claim "model" for its pod, so its GPU is held when the other UID is
    # asked about. Here no pod uses the claim: nothing but the UID keeps the plugin from preparing it.
    Scenario: A claim nobody prepared yet, asked about under another UID than its own, is refused
      Given a claim "model" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model" with UID "4f7b2c1e-5a3d-4e8f-9b60-0c1d2e3f4a52"
      Then the driver refused to prepare claim "model"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver prepared claim "model" with device "gpu-0"

  Rule: DRA-PLUGIN/PREPARE-IDEMPOTENT  Preparing a prepared claim again answers as before

    Scenario: The kubelet asks twice and gets the same devices twice
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer"
      Then the driver prepared the claim of pod "trainer" with the same devices each time it was asked

    Scenario: A claim asked about again together with a new claim is answered as before
      Given a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "scratch", "model" in one call
      Then the driver prepared claim "model" with the same devices each time it was asked
      And the devices the driver prepared for claim "scratch" are those of its allocation

  Rule: DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION  The plugin answers with the devices of the claim's allocation, each with its request

    @shape:devices:several
    Scenario: A claim with devices of two drivers: the plugin lists its own two GPUs and not the other driver's NIC
      Given the device class "nic" selecting driver "nic.example.com"
      And the ResourceSlice:
        """yaml
        metadata: {name: node-1-nics}
        spec:
          driver: nic.example.com
          pool: {name: node-1-nics, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: nic-0
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: workload}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 2}
            - name: nic
              exactly: {deviceClassName: nic}
        """
      And a pod "trainer" using claim "workload"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "workload"
      Then the devices the driver prepared for claim "workload" are those of its allocation

    # The first alternative selects no device (whatever the driver publishes), so the second one is allocated: any
    # of the driver's GPUs, which may be more than the three named here.
    @shape:devices:one
    Scenario: A device allocated for one alternative of a firstAvailable request names that request
      Given the ResourceClaim:
        """yaml
        metadata: {name: flexible}
        spec:
          devices:
            requests:
            - name: gpu
              firstAvailable:
              - name: none
                deviceClassName: gpu
                selectors: [{cel: {expression: 'device.driver == "no-such-driver.example.com"'}}]
              - {name: one, deviceClassName: gpu}
        """
      And a pod "trainer" using claim "flexible"
      When the scheduler runs
      Then claim "flexible" is allocated one device for request "gpu/one"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "flexible"
      Then the devices the driver prepared for claim "flexible" are those of its allocation

    Scenario: A claim whose status a scheduler wrote names the devices the plugin prepares
      Given a claim "model" for one "gpu" device
      And claim "model" is allocated device "gpu-2" of driver "gpu.example.com" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver prepared claim "model" with device "gpu-2"
      And the devices the driver prepared for claim "model" are those of its allocation

    Scenario: Over v1, each share of a device allocated in shares carries the share's ID
      Given driver "gpu.example.com" runs with the devices:
        """yaml
        metadata: {name: node-1-gpus}
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: gpu-0
            allowMultipleAllocations: true
            capacity:
              memory: {value: 80Gi}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: halves}
        spec:
          devices:
            requests:
            - name: first
              exactly: {deviceClassName: gpu}
            - name: second
              exactly: {deviceClassName: gpu}
        """
      And the status of claim "halves" is:
        """yaml
        allocation:
          devices:
            results:
            - request: first
              driver: gpu.example.com
              pool: node-1
              device: gpu-0
              shareID: 6a1e5c0b-8d2f-4b7a-9c3e-1f0d2a4b5c61
              consumedCapacity: {memory: 40Gi}
            - request: second
              driver: gpu.example.com
              pool: node-1
              device: gpu-0
              shareID: 6a1e5c0b-8d2f-4b7a-9c3e-1f0d2a4b5c62
              consumedCapacity: {memory: 40Gi}
          nodeSelector:
            nodeSelectorTerms:
            - matchFields:
              - {key: metadata.name, operator: In, values: [node-1]}
        """
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "halves" over DRAPlugin v1
      Then the devices the driver prepared for claim "halves" are those of its allocation

  Rule: DRA-PLUGIN/CDI-ID-SYNTAX  Every CDI device ID in an answer is a fully qualified CDI device name

    Scenario: The CDI device IDs of two prepared GPUs are vendor/class=name
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 2}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "pair"
      Then every CDI device ID the driver returned for claim "pair" is fully qualified


  Rule: DRA-PLUGIN/CDI-SPEC-FILES  The devices of a prepared claim are defined in CDI spec files on the node

    Scenario: The runtime finds both GPUs of a prepared claim in the node's CDI spec files
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 2}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "pair"
      Then every CDI device ID the driver returned for claim "pair" is defined in a CDI spec file on node "node-1"

    Scenario: Unpreparing one pod's claim leaves the spec of another pod's claim in place
      Given a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device
      And a pod "trainer" using claim "model"
      And a pod "tester" using claim "scratch"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      And pod "tester" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "scratch"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "scratch"
      Then every CDI device ID the driver returned for claim "model" is defined in a CDI spec file on node "node-1"

  Rule: DRA-PLUGIN/CDI-ID-PER-DEVICE  Each prepared device carries a CDI device ID

    Scenario: Both GPUs of a claim come with a CDI device ID
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 2}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "pair"
      Then every device the driver prepared for claim "pair" has a CDI device ID

  # The claims below are allocated by a status the scenario writes, as a scheduler (or someone else) left it: no
  # pod uses them, so no kubelet of the cluster prepares them before the harness asks.

  Rule: DRA-PLUGIN/DEVICES-ON-THIS-NODE  A claim allocated a device of another node's pool is not prepared

    Scenario: A claim allocated a device of another node's pool, under the name of a device of this node, is refused
      Given a claim "far" for one "gpu" device
      And claim "far" is allocated device "gpu-0" of driver "gpu.example.com" from pool "node-2" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "far"
      Then the driver refused to prepare claim "far"

  Rule: DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE  A device a prepared claim holds whole is not prepared for a second claim

    Scenario: A second claim allocated the GPU a prepared claim holds is refused
      Given a claim "model" for one "gpu" device
      And a claim "twin" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      And claim "twin" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver prepared claim "model" with device "gpu-0"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "twin"
      Then the driver refused to prepare claim "twin"

  Rule: DRA-PLUGIN/CLAIM-IDENTITY-IS-UID  A claim created again under the same name is a new claim

    # The kubelet has not unprepared the first claim yet when the new claim's pod comes to the node.
    Scenario: A claim deleted while prepared and created again with another GPU is prepared with its own GPU
      Given a claim "model" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And claim "model" is deleted
      And claim "model" for one "gpu" device is created
      And claim "model" is allocated device "gpu-1" of driver "gpu.example.com" on node "node-1"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver prepared claim "model" with device "gpu-1"
      And the devices the driver prepared for claim "model" are those of its allocation
      When the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "model" under the UID it was first prepared with
      Then the driver unprepared claim "model"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver prepared claim "model" with device "gpu-1"

  Rule: DRA-PLUGIN/CDI-ID-DEFINED-ONCE  No CDI device ID of an answer is defined by two spec files of one directory

    Scenario: Each GPU of a prepared claim is defined by one spec file on the node
      Given the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: gpus
              exactly: {deviceClassName: gpu, count: 2}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then pod "trainer" is bound to node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "pair"
      Then every CDI device ID the driver returned for claim "pair" is defined by one CDI spec file on node "node-1"

  Rule: DRA-PLUGIN/CONCURRENT-CALLS  Calls that arrive at the same time are each answered as if alone

    Scenario: Two claims, each prepared alone first, are prepared alike in calls sent at the same time
      Given a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device
      And claim "model" is allocated device "gpu-0" of driver "gpu.example.com" on node "node-1"
      And claim "scratch" is allocated device "gpu-1" of driver "gpu.example.com" on node "node-1"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "scratch"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claims "model", "scratch" in one call
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "model", "scratch" each in its own call, all at once
      Then the driver prepared each claim of the calls made at once as when it was asked alone
