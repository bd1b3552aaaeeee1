@kep-5322
Feature: The kubelet gives up on a pod whose claim a driver cannot prepare, permanently (KEP-5322)

  The driver under test is "gpu.example.com" with two GPUs on node "node-1"; the kubelet of that node is the
  component under test. A claim the driver cannot prepare permanently is one whose opaque configuration it
  cannot use, or one of a device the driver's plugin is told is unusable.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1" of class "gpu" on node "node-1"

  Rule: KEP-5322/POD-FAILED  A permanent error fails the pod

    # With the gate off the kubelet takes the permanent error for a transient one (D-5322-2): the pod stays
    # Pending while prepare is retried.
    Scenario Outline: A claim the plugin finds permanently unpreparable, with the gate <gate>, leaves its pod <phase>
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to prepare permanently
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 1 minute passes
      Then pod "trainer" is <phase>

      Examples:
        | gate | phase   |
        | on   | Failed  |
        | off  | Pending |

    Scenario: A claim with a configuration the driver cannot use fails its pod
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Failed

  Rule: KEP-5322/NO-RETRY  After a permanent error the pod's claims are not prepared again

    # With the gate off the refusal is retried with backoff: ten minutes reach past the five-minute cap.
    Scenario Outline: Ten minutes after the failure, with the gate <gate>, the plugin was asked <calls>
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 10 minutes pass
      Then driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" <calls>

      Examples:
        | gate | calls            |
        | on   | once             |
        | off  | at least 3 times |

  Rule: KEP-5322/ANY-CLAIM-FAILS-POD  One permanently failed claim fails the whole pod

    Scenario Outline: The plugin prepares one claim of the pod and fails the other permanently (<claims>, gate <gate>)
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claims "<claims>"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is <phase>
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" <model>
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "scratch" <scratch>

      # The failed claim first and last, since "the last answer decides" passes one order; the refused claim
      # asked once, since a kubelet that retries it fails the pod only later (which simulated patience allows).
      # With the gate off the refused claim is retried and the pod waits, whichever claim comes first; whether
      # the prepared claim is asked again is not judged there.
      Examples:
        | claims         | gate | phase   | model         | scratch          |
        | model, scratch | on   | Failed  | once          | once             |
        | scratch, model | on   | Failed  | once          | once             |
        | model, scratch | off  | Pending | at least once | at least 3 times |
        | scratch, model | off  | Pending | at least once | at least 3 times |

  Rule: KEP-5322/UNPREPARE-AFTER-PERMANENT  The failed pod's claims are still unprepared

    Scenario: Both claims of the failed pod, the refused one too, are unprepared and released
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      And pod "trainer" is deleted
      Then driver "gpu.example.com" on node "node-1" was asked to unprepare claim "scratch" at least once
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least once
      And claim "model" is reserved for nobody
      And claim "scratch" is reserved for nobody
      And pod "trainer" does not exist

    # Nobody deletes a failed pod (the kubelet may not evict it): a kubelet that unprepares only on deletion
    # passes the scenario above and holds both GPUs for as long as the Failed pod stays.
    Scenario: The failed pod nobody deletes still has both claims unprepared and released
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      Then pod "trainer" is Failed
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "scratch" at least once
      And driver "gpu.example.com" on node "node-1" was asked to unprepare claim "model" at least once
      And claim "model" is reserved for nobody
      And claim "scratch" is reserved for nobody
      And pod "trainer" still exists

    # With the gate off the refusal is transient: the pod nobody deletes stays Pending and keeps both claims.
    Scenario: With the gate off the pod nobody deletes keeps both claims reserved while prepare is retried
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=off"
      And a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is Pending
      And claim "model" is reserved for pod "trainer"
      And claim "scratch" is reserved for pod "trainer"

  Rule: KEP-5322/EVENT-SAYS-PERMANENT  The kubelet's event says when an error is permanent

    # With the gate off the kubelet does not read permanent_error, so its events call nothing permanent.
    Scenario Outline: The event of a permanent failure, with the gate <gate>, <says>
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then a Warning event "FailedPrepareDynamicResources" is recorded for pod "trainer"
      And <verdict>

      Examples:
        | gate | says                        | verdict                                                                                 |
        | on   | says it is permanent        | a Warning event "FailedPrepareDynamicResources" for pod "trainer" says the error is permanent |
        | off  | does not call it permanent  | no event for pod "trainer" calls an error permanent                                     |

    Scenario: The events of a transient failure do not call it permanent
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to prepare transiently 2 times
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then a Warning event "FailedPrepareDynamicResources" is recorded for pod "trainer"
      And no event for pod "trainer" calls an error permanent

  Rule: KEP-5322/NO-EVICTION  The kubelet neither deletes nor evicts the failed pod

    Scenario Outline: With the gate <gate> the pod is still there, <phase>, ten minutes later
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" still exists
      And pod "trainer" is <phase>

      Examples:
        | gate | phase   |
        | on   | Failed  |
        | off  | Pending |

  Rule: KEP-5322/FAILED-STAYS-FAILED  A failed pod is not started again when the kubelet looks again

    # The KEP lets the kubelet ask the driver again about a Failed pod ("In some cases, the kubelet will
    # re-reconcile Pods in a Failed phase"), so the calls to prepare are counted as at least one.
    # With the gate off there is no Failed pod: after the restart the pod is still Pending, retried, never run.
    Scenario Outline: After a kubelet restart, with the gate <gate>, the pod stays <phase>
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And kubelet restarts
      And 10 minutes pass
      Then pod "trainer" is <phase>
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" at least once

      Examples:
        | gate | phase   |
        | on   | Failed  |
        | off  | Pending |

    # Above, the claim is already unprepared and released when the kubelet restarts, so a kubelet that admits the
    # Failed pod again finds it no longer reserved and prepares nothing. Here unprepare is still failing: the
    # claims are still the pod's, and only the Failed phase keeps the restarted kubelet from preparing them.
    Scenario: Restarted while the failed pod's claims are still being unprepared, the kubelet does not start it
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to unprepare transiently 4 times
      And a claim "model" for one "gpu" device
      And a claim "scratch" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claims "model, scratch"
      When the scheduler runs
      Then pod "trainer" is Failed
      And claim "model" is reserved for pod "trainer"
      When kubelet restarts
      And 1 minute passes
      Then pod "trainer" is Failed
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "scratch" at least once
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" at least once
      And claim "model" is reserved for nobody
      And claim "scratch" is reserved for nobody

  Rule: KEP-5322/TRANSIENT-RETRIED  Errors not marked permanent are retried until they clear

    Scenario Outline: Two transient failures, then the pod runs (gate <gate>)
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to prepare transiently 2 times
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 1 minute passes
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" 3 times

      Examples:
        | gate |
        | on   |
        | off  |

    # A call that fails as a whole (the plugin crashed) carries no permanent_error: a kubelet that takes such a
    # failure for permanent once the gate is on fails this pod, though it reads per-claim errors right.
    Scenario: A plugin that crashes in the middle of the call twice is asked again, and the pod runs
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And the plugin of driver "gpu.example.com" on node "node-1" crashes during prepare 2 times
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 1 minute passes
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" 3 times

  Rule: KEP-5322/ONE-STATUS-WRITE  Failing a pod costs the kubelet at most one extra write of its status

    # The baseline is a pod on the same node whose driver keeps failing transiently: what a pod with a permanent
    # error cost before the feature (the kubelet retries it for ever). Counted: the writes that changed the status.
    # With the gate off both pods are retried alike: the refused one costs no extra write either.
    Scenario Outline: Ten minutes on, with the gate <gate>, the refused pod's status was written at most once more than a retried pod's
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And the device class "nic" selecting driver "nic.example.com"
      And driver "nic.example.com" runs with the devices:
        """yaml
        metadata: {name: node-1-nics}
        spec:
          driver: nic.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: nic-0
        """
      And the plugin of driver "nic.example.com" on node "node-1" fails to prepare transiently
      And a claim "link" for one "nic" device
      And a pod "waiting" using claim "link"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is <phase>
      And pod "waiting" is Pending
      And driver "nic.example.com" on node "node-1" was asked to prepare claim "link" at least 3 times
      And pod "trainer" had its status written at most once more than pod "waiting"

      Examples:
        | gate | phase   |
        | on   | Failed  |
        | off  | Pending |

    # A kubelet that fails the pod again after a restart writes its status again, though it stays Failed.
    Scenario: A kubelet restart after the failure writes the failed pod's status no more
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And the device class "nic" selecting driver "nic.example.com"
      And driver "nic.example.com" runs with the devices:
        """yaml
        metadata: {name: node-1-nics}
        spec:
          driver: nic.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: nic-0
        """
      And the plugin of driver "nic.example.com" on node "node-1" fails to prepare transiently
      And a claim "link" for one "nic" device
      And a pod "waiting" using claim "link"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And kubelet restarts
      And 10 minutes pass
      Then pod "trainer" is Failed
      And pod "waiting" is Pending
      And pod "trainer" had its status written at most once more than pod "waiting"

  Rule: KEP-5322/GATE  Only with the gate on does the kubelet give up

    Scenario Outline: With DRAHandlePermanentDriverFailures <gate> a permanent error leaves the pod <phase>
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is <phase>
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" <calls>

      Examples:
        | gate | phase   | calls              |
        | on   | Failed  | once               |
        | off  | Pending | at least 3 times   |

  Rule: KEP-5322/VERSION-SKEW  An older kubelet, or a driver that never marks errors permanent, means retries

    Scenario Outline: A <kubelet> kubelet with <gates> and a plugin that fails <how> leaves the pod <phase>
      Given kubelet version "<kubelet>" with feature gates "<gates>"
      And the plugin of driver "gpu.example.com" on node "node-1" fails to prepare <how>
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is <phase>
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" <calls>

      Examples: one side knows the field, the other does not
        | kubelet | gates                                  | how         | phase   | calls            |
        | current | DRAHandlePermanentDriverFailures=on    | permanently | Failed  | once             |
        | 1.36    | defaults                               | permanently | Pending | at least 3 times |
        | current | DRAHandlePermanentDriverFailures=off   | permanently | Pending | at least 3 times |
        | current | DRAHandlePermanentDriverFailures=on    | transiently | Pending | at least 3 times |

  Rule: KEP-5322/DISABLE  Turning the gate off makes new errors transient at once

    Scenario: A pod failed with the gate on stays Failed; the next one is retried after the gate is off
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=on"
      And a claim "first" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "a" using claim "first"
      When the scheduler runs
      Then pod "a" is Failed
      When kubelet restarts with feature gates "DRAHandlePermanentDriverFailures=off"
      And claim "second" for one "gpu" device is created
      And a pod "b" using claim "second" is created
      And the scheduler runs
      Then pod "b" is Running
      When a pod "c" using claim "first" is created
      And the scheduler runs
      And 10 minutes pass
      Then pod "c" is Pending
      And pod "a" is Failed
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "first" at least 3 times

  Rule: KEP-5322/REENABLE-NO-STATE  Turning the gate on again handles new permanent errors as if it had always been on

    Scenario: A pod retried while the gate was off fails once the gate is on again
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=off"
      And a claim "model" for one "gpu" device with configuration driver "gpu.example.com" cannot use
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 1 minute passes
      Then pod "trainer" is Pending
      When kubelet restarts with feature gates "DRAHandlePermanentDriverFailures=on"
      Then pod "trainer" is Failed
      And a Warning event "FailedPrepareDynamicResources" for pod "trainer" says the error is permanent

  Rule: KEP-5322/PERMANENT-WITHOUT-ERROR-SUCCEEDS  permanent_error without an error is a success

    Scenario Outline: A claim answered with permanent_error set and no error is prepared, and the pod runs (gate <gate>)
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And the plugin of driver "gpu.example.com" on node "node-1" answers prepare with permanent_error set and no error
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      And 10 minutes pass
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" once
      And no event for pod "trainer" calls an error permanent

      Examples:
        | gate |
        | on   |
        | off  |

  Rule: KEP-5322/ERROR-DEVICES-IGNORED  Devices in an answer that carries an error are ignored

    Scenario Outline: Two answers with an error next to the devices are retried, and the pod runs only after a clean answer (gate <gate>)
      Given kubelet with feature gates "DRAHandlePermanentDriverFailures=<gate>"
      And the plugin of driver "gpu.example.com" on node "node-1" answers prepare with an error next to its devices 2 times
      And a claim "model" for one "gpu" device
      And a pod "trainer" using claim "model"
      When the scheduler runs
      Then pod "trainer" is Pending
      When 1 minute passes
      Then pod "trainer" is Running
      And driver "gpu.example.com" on node "node-1" was asked to prepare claim "model" 3 times

      Examples:
        | gate |
        | on   |
        | off  |
