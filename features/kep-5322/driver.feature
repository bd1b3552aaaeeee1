@kep-5322
Feature: A driver's kubelet plugin reports permanent failures, and keeps replacement pods off a broken device (KEP-5322)

  The driver under test is "gpu.example.com" with two GPUs on node "node-1". In the first rules the harness
  plays the kubelet and calls the plugin over its DRAPlugin socket; in the last ones the node's kubelet, with
  DRAHandlePermanentDriverFailures on, runs the pods and the harness reads what the driver publishes.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1" of class "gpu" on node "node-1"

  Rule: KEP-5322/WIRE-FIELD  A permanent failure is marked with permanent_error, over v1 and v1beta1

    Scenario Outline: Over DRAPlugin <version> the refusal of an unusable configuration is marked permanent
      Given a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model" over DRAPlugin <version>
      Then the driver refused to prepare claim "model" permanently

      Examples:
        | version |
        | v1      |
        | v1beta1 |

  Rule: KEP-5322/PERMANENT-NEEDS-ERROR  permanent_error only ever comes with an error

    Scenario: A successful answer and a permanent refusal: only the refusal is marked permanent
      Given a claim "good" for one "gpu" device
      And a claim "bad" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claims "good, bad"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claims "good", "bad" in one call
      Then the driver refused to prepare claim "bad" permanently
      And the devices the driver prepared for claim "good" are those of its allocation
      And the driver marked only failed answers permanent

  Rule: KEP-5322/DRIVER-EXPECTS-REPEAT  A repeat of a permanently failed request is answered the same way

    Scenario: Asked twice, the plugin refuses permanently twice, and then prepares another claim
      Given a claim "bad" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a claim "good" for one "gpu" device
      And a pod "trainer" using claims "bad, good"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "bad"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "bad"
      Then the driver refused to prepare claim "bad" permanently each time it was asked
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "good"
      Then the devices the driver prepared for claim "good" are those of its allocation

  Rule: KEP-5322/DRIVER-UNPREPARE-AFTER-PERMANENT  Unpreparing a permanently refused claim succeeds

    Scenario: Refused permanently, then unprepared
      Given a claim "bad" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "bad"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "bad"
      And the kubelet on node "node-1" asks driver "gpu.example.com" to unprepare claim "bad"
      Then the driver unprepared claim "bad"

  Rule: KEP-5322/DRIVER-INVALID-CONFIG-PERMANENT  A configuration the driver cannot use is a permanent error

    Scenario: Unknown parameters in the claim's opaque configuration are refused permanently
      Given a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" to prepare claim "model"
      Then the driver refused to prepare claim "model" permanently

  Rule: KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE  An unusable device is tainted NoSchedule, so the replacement pod gets another

    # Which GPU the claim gets first is the allocator's choice (both are equal), so the fault follows the GPU
    # the plugin is first asked to prepare: it stays broken and the other one works. A driver that taints the
    # wrong GPU, or a scheduler that ignores the taint, hands the replacement the broken GPU and it fails too.
    Scenario: The pod fails on a broken GPU; its replacement gets the other GPU and runs
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to prepare permanently for whichever device it is asked to prepare first
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Failed
      And exactly one of devices "gpu-0, gpu-1" of ResourceSlice "node-1-gpus" has a NoSchedule taint
      When a pod "replacement" using claim "model" is created
      And the scheduler runs
      Then claim "model" is allocated the one of devices "gpu-0, gpu-1" of ResourceSlice "node-1-gpus" without a NoSchedule taint
      And pod "replacement" is Running

    # With DRADeviceTaints off in kube-scheduler the driver still taints the GPU (kube-apiserver keeps the taint;
    # the driver cannot see the scheduler's gates), but the scheduler ignores taints: the replacement is bound
    # with either GPU, and whether it then runs is the allocator's luck, so that is not judged.
    Scenario Outline: With kube-scheduler <release> and <gates> the broken GPU is tainted all the same and the replacement is bound
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And kube-scheduler version "<release>" with feature gates "<gates>"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to prepare permanently for whichever device it is asked to prepare first
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Failed
      And exactly one of devices "gpu-0, gpu-1" of ResourceSlice "node-1-gpus" has a NoSchedule taint
      When a pod "replacement" using claim "model" is created
      And the scheduler runs
      Then pod "replacement" is bound to node "node-1"

      # DRADeviceTaints turned on by default at 1.36: a 1.35 scheduler at its defaults ignores taints too.
      Examples:
        | release | gates               |
        | current | DRADeviceTaints=off, DRADeviceTaintRules=off |
        | 1.35    | defaults            |

  Rule: KEP-5322/DRIVER-CONFIG-ERROR-NO-TAINT  A configuration error leaves the device untainted

    Scenario: The pod fails on its configuration; no GPU is tainted
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Failed
      And device "gpu-0" of ResourceSlice "node-1-gpus" has no NoSchedule taint
      And device "gpu-1" of ResourceSlice "node-1-gpus" has no NoSchedule taint
