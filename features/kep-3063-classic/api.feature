@kep-3063-classic
Feature: The classic API that kube-apiserver serves (KEP-3063 Design Details / API, cdi.k8s.io/v1alpha1)

  Background:
    Given a cluster serving the classic DRA API

  Rule: KEP-3063-CLASSIC/CLASS-SHAPE  A resource class names one driver

    # Also the class's half of PARAMETERS-OPAQUE, whose own scenario stores a claim's parameters.
    @rule:KEP-3063-CLASSIC/PARAMETERS-OPAQUE
    Scenario: A class with a driver and parameters is accepted as given
      When the user creates the ResourceClass:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: acme-gpu}
        driverName: gpu.acme.com
        parameters:
          initCommand: [/usr/local/bin/acme-gpu-init, --cluster, my-cluster]
        """
      Then the request is accepted
      And the stored ResourceClass "acme-gpu" has field "parameters" set to {initCommand: [/usr/local/bin/acme-gpu-init, --cluster, my-cluster]}

    Scenario: A class without a driver is refused
      When the user creates the ResourceClass:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: nameless}
        """
      Then the request is rejected at "driverName" by rule "KEP-3063-CLASSIC/CLASS-SHAPE"

  Rule: KEP-3063-CLASSIC/CLASS-DRIVER-NAME-FORMAT  A driver name is a domain name

    Scenario Outline: Driver name <driver> is <verdict>
      When the user creates the ResourceClass:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: gpus}
        driverName: <driver>
        """
      Then the request is <outcome>

      Examples:
        | driver           | verdict  | outcome                                                                          |
        | gpu.acme.com     | accepted | accepted                                                                         |
        | fpga             | accepted | accepted                                                                         |
        | GPU.Acme.com     | refused  | rejected at "driverName" by rule "KEP-3063-CLASSIC/CLASS-DRIVER-NAME-FORMAT"     |
        | gpu_acme.com     | refused  | rejected at "driverName" by rule "KEP-3063-CLASSIC/CLASS-DRIVER-NAME-FORMAT"     |

  Rule: KEP-3063-CLASSIC/PARAMETERS-OPAQUE  Parameters are stored as given

    Scenario: A claim's parameters of any shape are kept
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: partial}
        spec:
          resourceClassName: acme-gpu
          parameters:
            memory: 2Gi
            layout: [{slice: 0, share: 0.5}, null]
        """
      Then the request is accepted
      And the stored ResourceClaim "partial" has field "spec.parameters" set to {memory: 2Gi, layout: [{slice: 0, share: 0.5}, null]}

  Rule: KEP-3063-CLASSIC/CLAIM-SHAPE  A claim names its class and a known allocation mode

    Scenario: A claim without a class is refused
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: classless}
        spec: {}
        """
      Then the request is rejected at "spec.resourceClassName" by rule "KEP-3063-CLASSIC/CLAIM-SHAPE"

    Scenario: An allocation mode other than Immediate or Delayed is refused
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: eager}
        spec: {resourceClassName: acme-gpu, allocationMode: Eager}
        """
      Then the request is rejected at "spec.allocationMode" by rule "KEP-3063-CLASSIC/CLAIM-SHAPE"

  Rule: KEP-3063-CLASSIC/ALLOCATION-MODE-DEFAULT  Allocation waits for a pod unless the claim says otherwise

    Scenario: A claim created without a mode is stored as Delayed
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: later}
        spec: {resourceClassName: acme-gpu}
        """
      Then the request is accepted
      And the stored ResourceClaim "later" has field "spec.allocationMode" set to Delayed
      And claim "later" is in phase "Pending"

    Scenario: An Immediate claim keeps its mode
      Given a classic claim "now" of class "acme-gpu" with Immediate allocation
      When the user updates the spec of ResourceClaim "now":
        """yaml
        resourceClassName: acme-gpu
        allocationMode: Immediate
        """
      Then the request is accepted

  Rule: KEP-3063-CLASSIC/CLAIM-SPEC-IMMUTABLE  A claim's spec never changes after create

    Scenario: Changing the class of a claim is refused
      Given a classic claim "fixed" of class "acme-gpu"
      When the user updates the spec of ResourceClaim "fixed":
        """yaml
        resourceClassName: other-gpu
        allocationMode: Delayed
        """
      Then the request is rejected at "spec" by rule "KEP-3063-CLASSIC/CLAIM-SPEC-IMMUTABLE"

    Scenario: Adding parameters later is refused too
      Given a classic claim "fixed" of class "acme-gpu"
      When the user updates the spec of ResourceClaim "fixed":
        """yaml
        resourceClassName: acme-gpu
        allocationMode: Delayed
        parameters: {memory: 4Gi}
        """
      Then the request is rejected at "spec" by rule "KEP-3063-CLASSIC/CLAIM-SPEC-IMMUTABLE"

  Rule: KEP-3063-CLASSIC/CLASS-EXISTENCE-NOT-CHECKED  The API server does not require the class to exist

    Scenario: A claim naming a missing class is stored
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: orphan}
        spec: {resourceClassName: no-such-class}
        """
      Then the request is accepted

    Scenario: A driver's webhook may refuse it instead
      Given a driver webhook that refuses claims of classes that do not exist
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: orphan}
        spec: {resourceClassName: no-such-class}
        """
      Then the request is rejected at "spec.resourceClassName" by rule "KEP-3063-CLASSIC/CLASS-EXISTENCE-NOT-CHECKED"

  Rule: KEP-3063-CLASSIC/STATUS-SUBRESOURCE  Status is written only through the status subresource

    Scenario: Status sent with the claim on create is ignored
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: cdi.k8s.io/v1alpha1
        metadata: {name: forged}
        spec: {resourceClassName: acme-gpu}
        status: {phase: Allocated, driverName: gpu.acme.com}
        """
      Then the request is accepted
      And claim "forged" is in phase "Pending"
      And the stored ResourceClaim "forged" has no field "status.driverName"

    Scenario: A status write leaves the spec alone
      Given a classic claim "plain" of class "acme-gpu"
      When the user updates the status of ResourceClaim "plain":
        """yaml
        phase: Pending
        userLimit: 1
        driverName: gpu.acme.com
        """
      Then the request is accepted
      And claim "plain" records driver "gpu.acme.com"
      And the stored ResourceClaim "plain" has field "spec.allocationMode"

  Rule: KEP-3063-CLASSIC/PHASE-VALUES  Pending, Allocated or Reallocate

    Scenario Outline: Phase <phase> is <verdict>
      Given a classic claim "c" of class "acme-gpu"
      When the user updates the status of ResourceClaim "c":
        """yaml
        phase: <phase>
        userLimit: 1
        """
      Then the request is <outcome>

      Examples:
        | phase      | verdict  | outcome                                                               |
        | Allocated  | accepted | accepted                                                              |
        | Reallocate | accepted | accepted                                                              |
        | Deallocate | refused  | rejected at "status.phase" by rule "KEP-3063-CLASSIC/PHASE-VALUES"    |
        | Ready      | refused  | rejected at "status.phase" by rule "KEP-3063-CLASSIC/PHASE-VALUES"    |

  Rule: KEP-3063-CLASSIC/USER-LIMIT  One user unless the claim allows more; -1 for any number

    Scenario: A new claim allows one user
      Given a classic claim "solo" of class "acme-gpu"
      Then claim "solo" allows 1 user

    Scenario Outline: userLimit <limit> is <verdict>
      Given a classic claim "c" of class "acme-gpu"
      When the user updates the status of ResourceClaim "c":
        """yaml
        phase: Pending
        userLimit: <limit>
        """
      Then the request is <outcome>

      Examples:
        | limit | verdict  | outcome                                                                 |
        | 1     | accepted | accepted                                                                |
        | 4     | accepted | accepted                                                                |
        | -1    | accepted | accepted                                                                |
        | 0     | refused  | rejected at "status.userLimit" by rule "KEP-3063-CLASSIC/USER-LIMIT"    |
        | -2    | refused  | rejected at "status.userLimit" by rule "KEP-3063-CLASSIC/USER-LIMIT"    |

  Rule: KEP-3063-CLASSIC/POD-CLAIM-ONE-SOURCE  A pod's claim entry has exactly one source

    Scenario Outline: An entry with <sources> is <verdict>
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: worker}
        spec:
          containers: [{name: main, image: registry.example/app:1}]
          resourceClaims:
          - <entry>
        """
      Then the request is <outcome>

      Examples:
        | sources           | entry                                                                              | verdict  | outcome                                                                                |
        | a claim name      | {name: gpu, resourceClaimName: shared-gpu}                                         | accepted | accepted                                                                               |
        | a template        | {name: gpu, template: {spec: {resourceClassName: acme-gpu}}}                        | accepted | accepted                                                                               |
        | both              | {name: gpu, resourceClaimName: x, template: {spec: {resourceClassName: acme-gpu}}} | refused  | rejected at "spec.resourceClaims[0]" by rule "KEP-3063-CLASSIC/POD-CLAIM-ONE-SOURCE"   |
        | neither           | {name: gpu}                                                                        | refused  | rejected at "spec.resourceClaims[0]" by rule "KEP-3063-CLASSIC/POD-CLAIM-ONE-SOURCE"   |

  Rule: KEP-3063-CLASSIC/CONTAINER-CLAIMS-NAMED  Containers use claims by the pod's entry names

    @shape:container-claims:several
    Scenario: Two containers share the one claim entry they both name
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: device-consumer}
        spec:
          resourceClaims:
          - {name: gpu, template: {spec: {resourceClassName: acme-gpu, parameters: {memory: 2Gi}}}}
          containers:
          - {name: workload, image: my-app, resources: {claims: [gpu]}}
          - {name: monitor, image: my-app, resources: {claims: [gpu]}}
        """
      Then the request is accepted

    Scenario: A container naming no entry is refused
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: worker}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
          containers: [{name: main, image: my-app, resources: {claims: [gpu, fpga]}}]
        """
      Then the request is rejected at "spec.containers[0].resources.claims[1]" by rule "KEP-3063-CLASSIC/CONTAINER-CLAIMS-NAMED"

    Scenario: Two entries of one name are refused
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: worker}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: a}, {name: gpu, resourceClaimName: b}]
          containers: [{name: main, image: my-app}]
        """
      Then the request is rejected at "spec.resourceClaims[1].name" by rule "KEP-3063-CLASSIC/CONTAINER-CLAIMS-NAMED"

  Rule: KEP-3063-CLASSIC/GENERATED-NAME-VALID  The claim a template would make must have a valid name

    Scenario: A generated name over 253 characters is refused
      When the user creates the Pod with "metadata.name" padded with "x" to 250 characters:
        """yaml
        apiVersion: v1
        metadata: {name: w}
        spec:
          resourceClaims: [{name: gpu, template: {spec: {resourceClassName: acme-gpu}}}]
          containers: [{name: main, image: my-app}]
        """
      Then the request is rejected at "spec.resourceClaims[0].name" by rule "KEP-3063-CLASSIC/GENERATED-NAME-VALID"

    Scenario: The same pod name with a named claim is fine
      When the user creates the Pod with "metadata.name" padded with "x" to 250 characters:
        """yaml
        apiVersion: v1
        metadata: {name: w}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
          containers: [{name: main, image: my-app}]
        """
      Then the request is accepted

  Rule: KEP-3063-CLASSIC/TEMPLATE-METADATA  A template carries only labels and annotations, and a valid spec

    Scenario: Labels and annotations are allowed
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: worker}
        spec:
          resourceClaims:
          - name: gpu
            template:
              metadata: {labels: {team: ml}, annotations: {note: trial}}
              spec: {resourceClassName: acme-gpu}
          containers: [{name: main, image: my-app}]
        """
      Then the request is accepted

    Scenario: A name in the template's metadata is refused
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: worker}
        spec:
          resourceClaims:
          - name: gpu
            template:
              metadata: {name: my-own-name}
              spec: {resourceClassName: acme-gpu}
          containers: [{name: main, image: my-app}]
        """
      Then the request is rejected at "spec.resourceClaims[0].template.metadata.name" by rule "KEP-3063-CLASSIC/TEMPLATE-METADATA"

    Scenario: The template's spec is checked like a claim's
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: worker}
        spec:
          resourceClaims:
          - {name: gpu, template: {spec: {resourceClassName: acme-gpu, allocationMode: Sometimes}}}
          containers: [{name: main, image: my-app}]
        """
      Then the request is rejected at "spec.resourceClaims[0].template.spec.allocationMode" by rule "KEP-3063-CLASSIC/CLAIM-SHAPE"

  Rule: KEP-3063-CLASSIC/GATE-OFF-PRESERVES-POD-FIELDS  Disabling the feature keeps existing pods' claim fields

    Scenario: A new pod loses its claims while the gate is off
      Given kube-apiserver with feature gates "DynamicResourceAllocation=off"
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: late}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
          containers: [{name: main, image: my-app, resources: {claims: [gpu]}}]
        """
      Then the request is accepted
      And the stored Pod "late" has no field "spec.resourceClaims"
      And the stored Pod "late" has no field "spec.containers[0].resources.claims"

    Scenario: A pod created while it was on keeps them through an update with the gate off
      When the user creates the Pod:
        """yaml
        apiVersion: v1
        metadata: {name: early}
        spec:
          resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
          containers: [{name: main, image: my-app, resources: {claims: [gpu]}}]
        """
      And kube-apiserver restarts with feature gates "DynamicResourceAllocation=off"
      And the user updates the spec of Pod "early":
        """yaml
        resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
        containers: [{name: main, image: my-app:2, resources: {claims: [gpu]}}]
        """
      Then the request is accepted
      And the stored Pod "early" has field "spec.resourceClaims[0].resourceClaimName"
      And the stored Pod "early" has field "spec.containers[0].resources.claims[0]"
