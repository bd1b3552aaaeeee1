@kep-4381 @structured-allocation
Feature: What an allocation records: results, node selector and configuration (structured allocation)

  Background:
    Given nodes "worker-1, worker-2"
    And the DeviceClass:
      """yaml
      metadata: {name: gpu}
      spec:
        selectors:
        - cel: {expression: device.driver == "gpu.example.com"}
        config:
        - opaque:
            driver: gpu.example.com
            parameters: {mig: disabled}
      """

  Rule: KEP-4381/RESULT-FIELDS  One result per device: request, driver, pool, device, in the order chosen

    @shape:requests:several
    Scenario: Two requests of one claim, each with its devices
      Given node "worker-1" has 3 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: job}
        spec:
          devices:
            requests:
            - name: main
              exactly: {deviceClassName: gpu, count: 2}
            - name: spare
              exactly: {deviceClassName: gpu}
        """
      And a pod "trainer" using claim "job"
      When the scheduler runs
      Then the allocation of claim "job" has results:
        """yaml
        - {request: main, driver: gpu.example.com, pool: worker-1, device: gpu-0}
        - {request: main, driver: gpu.example.com, pool: worker-1, device: gpu-1}
        - {request: spare, driver: gpu.example.com, pool: worker-1, device: gpu-2}
        """

  Rule: KEP-4381/RESULT-NODE-SELECTOR  Pinned for node-local devices, merged for selected nodes, absent for all nodes

    Scenario: Node-local devices pin the allocation to the node
      Given node "worker-2" has 1 devices "gpu" of driver "gpu.example.com"
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then the allocation of claim "training" has node selector:
        """yaml
        nodeSelectorTerms:
        - matchFields:
          - {key: metadata.name, operator: In, values: [worker-2]}
        """

    Scenario: A device reachable from every node leaves the allocation usable everywhere
      Given the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: fabric, generation: 1, resourceSliceCount: 1}
          allNodes: true
          devices:
          - name: gpu-0
        """
      And a claim "training" for one "gpu" device
      And a pod "trainer" using claim "training"
      When the scheduler runs
      Then claim "training" is usable on every node

    Scenario: Devices of two label-selected slices give one term with both requirements
      Given the Node:
        """yaml
        metadata:
          name: worker-3
          labels: {example.com/rack: r7, example.com/row: b}
        """
      And the objects of manifest "rack-r7.yaml"
      And the ResourceSlice:
        """yaml
        spec:
          driver: gpu.example.com
          pool: {name: row-b, generation: 1, resourceSliceCount: 1}
          nodeSelector:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: example.com/row, operator: In, values: [b]}
          devices:
          - name: gpu-1
        """
      And the ResourceClaim:
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
      Then pod "trainer" is bound to node "worker-3"
      And the allocation of claim "pair" has node selector:
        """yaml
        nodeSelectorTerms:
        - matchExpressions:
          - {key: example.com/rack, operator: In, values: [r7]}
          - {key: example.com/row, operator: In, values: [b]}
        """

  Rule: KEP-4381/RESULT-CONFIG  Class config and claim config are copied into the allocation

    @shape:class-configs:one @shape:claim-configs:one @shape:config-requests:all
    Scenario: The class's config for the request that used it, then the claim's config for its request
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: configured}
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: gpu}
            config:
            - requests: [gpu]
              opaque:
                driver: gpu.example.com
                parameters: {sharing: time-slicing}
        """
      And a pod "trainer" using claim "configured"
      When the scheduler runs
      Then the allocation of claim "configured" has config:
        """yaml
        - source: FromClass
          opaque:
            driver: gpu.example.com
            parameters: {mig: disabled}
        - source: FromClaim
          opaque:
            driver: gpu.example.com
            parameters: {sharing: time-slicing}
        """

    @shape:claim-configs:several @shape:config-requests:some
    Scenario: Configs scoped to one of two requests keep their requests, even when they name two subrequests
      Given node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: pair}
        spec:
          devices:
            requests:
            - name: main
              exactly: {deviceClassName: gpu}
            - name: spare
              firstAvailable:
              - {name: big, deviceClassName: gpu, count: 5}
              - {name: small, deviceClassName: gpu}
            config:
            - requests: [main]
              opaque:
                driver: gpu.example.com
                parameters: {role: main}
            - requests: [spare/big, spare/small]
              opaque:
                driver: gpu.example.com
                parameters: {role: spare}
        """
      And a pod "trainer" using claim "pair"
      When the scheduler runs
      Then the allocation of claim "pair" has config:
        """yaml
        - source: FromClass
          opaque:
            driver: gpu.example.com
            parameters: {mig: disabled}
        - source: FromClaim
          requests: [main]
          opaque:
            driver: gpu.example.com
            parameters: {role: main}
        - source: FromClaim
          requests: [spare/big, spare/small]
          opaque:
            driver: gpu.example.com
            parameters: {role: spare}
        """

    Scenario: A claim config for a subrequest that was not chosen stays out of the allocation
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: flexible}
        spec:
          devices:
            requests:
            - name: gpu
              firstAvailable:
              - {name: two, deviceClassName: gpu, count: 2}
              - {name: one, deviceClassName: gpu}
            config:
            - requests: [gpu/two]
              opaque:
                driver: gpu.example.com
                parameters: {sharing: none}
            - requests: [gpu/one]
              opaque:
                driver: gpu.example.com
                parameters: {sharing: time-slicing}
        """
      And a pod "trainer" using claim "flexible"
      When the scheduler runs
      Then the allocation of claim "flexible" has config:
        """yaml
        - source: FromClass
          opaque:
            driver: gpu.example.com
            parameters: {mig: disabled}
        - source: FromClaim
          opaque:
            driver: gpu.example.com
            parameters: {sharing: time-slicing}
        """

    # Shapes walk (issue 39): a class with two configs gives two FromClass entries, each naming the request that
    # used the class, and a claim config without requests (empty means all) is copied as it is, beside one that
    # names a single request.
    @shape:class-configs:several @shape:claim-configs:several @shape:config-requests:empty
    Scenario: Two configs of one class and a claim config for every request are all copied
      Given node "worker-1" has 2 devices "gpu" of driver "gpu.example.com"
      And the DeviceClass:
        """yaml
        metadata: {name: tuned}
        spec:
          selectors:
          - cel: {expression: device.driver == "gpu.example.com"}
          config:
          - opaque:
              driver: gpu.example.com
              parameters: {clock: high}
          - opaque:
              driver: gpu.example.com
              parameters: {power: low}
        """
      And the ResourceClaim:
        """yaml
        metadata: {name: shaped}
        spec:
          devices:
            requests:
            - name: a
              exactly: {deviceClassName: tuned}
            - name: b
              exactly: {deviceClassName: gpu}
            config:
            - opaque:
                driver: gpu.example.com
                parameters: {log: verbose}
            - requests: [b]
              opaque:
                driver: gpu.example.com
                parameters: {role: b}
        """
      And a pod "trainer" using claim "shaped"
      When the scheduler runs
      Then the allocation of claim "shaped" has config:
        """yaml
        - source: FromClass
          requests: [a]
          opaque:
            driver: gpu.example.com
            parameters: {clock: high}
        - source: FromClass
          requests: [a]
          opaque:
            driver: gpu.example.com
            parameters: {power: low}
        - source: FromClass
          requests: [b]
          opaque:
            driver: gpu.example.com
            parameters: {mig: disabled}
        - source: FromClaim
          opaque:
            driver: gpu.example.com
            parameters: {log: verbose}
        - source: FromClaim
          requests: [b]
          opaque:
            driver: gpu.example.com
            parameters: {role: b}
        """

    # Shapes walk (issue 39): with no config in the class or the claim the allocation carries none.
    @shape:class-configs:empty @shape:claim-configs:empty
    Scenario: A class and a claim without config give an allocation without config
      Given node "worker-1" has 1 devices "gpu" of driver "gpu.example.com"
      And the device class "plain" selecting driver "gpu.example.com"
      And the ResourceClaim:
        """yaml
        metadata: {name: unconfigured}
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: plain}
        """
      And a pod "trainer" using claim "unconfigured"
      When the scheduler runs
      Then the allocation of claim "unconfigured" has config:
        """yaml
        []
        """
