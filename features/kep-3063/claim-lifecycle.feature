@kep-3063
Feature: Claims are created from templates and released with their pods (KEP-3063 kube-controller-manager)

  Background:
    Given a node "worker-1"
    And the device class "gpu" selecting driver "gpu.example.com"
    And node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"

  Rule: KEP-3063/TEMPLATE-CLAIM-CREATED  A template entry yields a claim owned by the pod

    Scenario: The controller creates the claim and the pod is scheduled with it
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      Then pod "trainer" has one generated claim owned by the pod
      And the claim of pod "trainer" is allocated device "gpu-0"
      And the claim of pod "trainer" is reserved for pod "trainer"
      And pod "trainer" is bound to node "worker-1"

  Rule: KEP-3063/TEMPLATE-CLAIM-DELETED-WITH-POD  A generated claim goes with its pod

    Scenario: Deleting the pod deletes its generated claim
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And pod "trainer" is deleted
      And the scheduler runs
      Then pod "trainer" does not exist
      And the claims generated for pod "trainer" are gone

    Scenario: A finished pod's generated claim is deleted even though the pod remains
      Given a pod "job" with a claim for one "gpu" device
      And driver "gpu.example.com" takes over the devices of node "worker-1"
      When the scheduler runs
      And pod "job" finishes with phase "Succeeded"
      And the scheduler runs
      Then the claims generated for pod "job" are gone

  Rule: KEP-3063/STANDALONE-CLAIM-OUTLIVES-POD  A user's claim survives its pods and can be reused

    Scenario: After the pod is deleted the claim remains and serves the next pod
      Given a claim "workspace" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the scheduler runs
      And pod "first" is deleted
      And the scheduler runs
      Then claim "workspace" still exists
      And claim "workspace" is reserved for nobody
      When a pod "second" using claim "workspace" is created
      And the scheduler runs
      Then pod "second" is bound to node "worker-1"
      And claim "workspace" is reserved for pod "second"

    # Upstream's resourceclaim controller deallocates when it removes a claim's last consumer, never a
    # claim that nobody has reserved yet: a driver or an administrator may allocate a claim in advance.
    # kube-scheduler 1.36 cannot reserve such a claim (the rule's upstream_divergences).
    @upstream-differs:scheduler-stamps-foreign-allocation
    Scenario: A claim allocated before anyone reserves it keeps its allocation and serves a pod
      Given a claim "workspace" for one "gpu" device
      And the ResourceClaim "workspace" has the status:
        """yaml
        allocation:
          devices:
            results:
            - {request: device, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        """
      When the scheduler runs
      Then claim "workspace" is allocated device "gpu-1"
      And claim "workspace" is reserved for nobody
      When a pod "first" using claim "workspace" is created
      And the scheduler runs
      Then pod "first" is bound to node "worker-1"
      And claim "workspace" is reserved for pod "first"
      And claim "workspace" is allocated device "gpu-1"

  Rule: KEP-3063/RESERVATION-RELEASED  Pods that are gone or done no longer hold their claims

    # Both orders: removing the oldest entry instead of the deleted pod's own passes when the first pod goes.
    Scenario Outline: A deleted pod leaves reservedFor of a shared claim, the other pod keeps it (<gone> goes)
      Given a claim "shared" for one "gpu" device
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      Then claim "shared" is reserved for pods "reader, writer"
      When pod "<gone>" is deleted
      And the scheduler runs
      Then claim "shared" is reserved for pod "<stays>"
      And claim "shared" is allocated device "gpu-0"

      Examples:
        | gone   | stays  |
        | reader | writer |
        | writer | reader |

    Scenario: A finished pod leaves reservedFor and the claim's device is freed
      Given a claim "batch" for one "gpu" device
      And driver "gpu.example.com" takes over the devices of node "worker-1"
      And a pod "job" using claim "batch"
      When the scheduler runs
      And pod "job" finishes with phase "Failed"
      And the scheduler runs
      Then claim "batch" is reserved for nobody
      And claim "batch" is not allocated

  Rule: KEP-3063/VANISHED-POD-RELEASED  A pod object that vanishes without its kubelet loses its reservation

    Scenario: A pod force-deleted with a grace period of 0 releases its claim
      Given a claim "workspace" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the scheduler runs
      Then claim "workspace" is reserved for pod "first"
      When pod "first" is force-deleted with a grace period of 0
      And the scheduler runs
      Then pod "first" does not exist
      And claim "workspace" is reserved for nobody
      And claim "workspace" is not allocated

    # Both orders: removing the oldest entry instead of the vanished pod's own passes when the first pod goes.
    Scenario Outline: A force-deleted pod leaves reservedFor of a shared claim, the other pod keeps it (<gone> goes)
      Given a claim "shared" for one "gpu" device
      And a pod "reader" using claim "shared"
      And a pod "writer" using claim "shared"
      When the scheduler runs
      Then claim "shared" is reserved for pods "reader, writer"
      When pod "<gone>" is force-deleted with a grace period of 0
      And the scheduler runs
      Then claim "shared" is reserved for pod "<stays>"
      And claim "shared" is allocated device "gpu-0"

      Examples:
        | gone   | stays  |
        | reader | writer |
        | writer | reader |

    Scenario: The pods of a node that is gone are garbage-collected and their claims released
      Given a claim "workspace" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the scheduler runs
      Then claim "workspace" is reserved for pod "first"
      When node "worker-1" is deleted
      And 2 minutes pass
      Then pod "first" does not exist
      And claim "workspace" is reserved for nobody
      And claim "workspace" is not allocated

  Rule: KEP-3063/CLAIM-STATUS-SUBRESOURCE  An ordinary update of a claim leaves its status alone

    Scenario: An update carrying an empty status keeps the allocation and the reservation, and stores the rest
      Given a claim "workspace" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the scheduler runs
      Then claim "workspace" is reserved for pod "first"
      When the user updates claim "workspace" through the main resource, changing its status to:
        """yaml
        {}
        """
      Then claim "workspace" carries the label the user wrote
      And claim "workspace" is reserved for pod "first"
      And claim "workspace" is allocated device "gpu-0"

    Scenario: An update carrying another allocation keeps the one the scheduler wrote
      Given a claim "workspace" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the scheduler runs
      Then claim "workspace" is allocated device "gpu-0"
      When the user updates claim "workspace" through the main resource, changing its status to:
        """yaml
        allocation:
          devices:
            results:
            - {request: device, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        """
      Then claim "workspace" carries the label the user wrote
      And claim "workspace" is allocated device "gpu-0"
      And claim "workspace" is reserved for pod "first"

  Rule: KEP-3063/POD-CLAIMS-IMMUTABLE  A pod's resourceClaims cannot change once the pod exists

    Scenario Outline: The API server refuses an update of a pod that changes its claims (<change>)
      Given a claim "workspace" for one "gpu" device
      And a claim "other" for one "gpu" device
      And a pod "first" using claim "workspace"
      When the user updates the Pod "first" with:
        | field   | value   |
        | <field> | <value> |
      Then the request is rejected at "spec" by rule "KEP-3063/POD-CLAIMS-IMMUTABLE"

      Examples:
        | change           | field                                    | value                                                                                     |
        | entry re-pointed | spec.resourceClaims[0].resourceClaimName | other                                                                                     |
        | entry added      | spec.resourceClaims                      | [{name: claim-0, resourceClaimName: workspace}, {name: extra, resourceClaimName: other}] |
        | entries removed  | spec.resourceClaims                      | []                                                                                        |
