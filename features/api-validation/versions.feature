@profile:core
Feature: Every served resource.k8s.io version is accepted and stored in one form

  Rule: DRA-API/SERVED-VERSIONS  v1beta1 and v1beta2 objects are converted to the v1 form; a field of another version is unknown

    Scenario: A v1beta1 claim's flat request becomes an exactly request
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: resource.k8s.io/v1beta1
        spec:
          devices:
            requests:
            - name: gpu
              deviceClassName: gpu.example.com
              count: 2
        """
      Then the request is accepted
      And the stored ResourceClaim "resourceclaim" has field "spec.devices.requests[0].exactly.count"
      And the stored ResourceClaim "resourceclaim" has no field "spec.devices.requests[0].deviceClassName"

    Scenario: A v1beta1 request with firstAvailable keeps its subrequests
      When the user creates the ResourceClaimTemplate:
        """yaml
        apiVersion: resource.k8s.io/v1beta1
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                firstAvailable:
                - {name: large, deviceClassName: gpu.example.com}
                - {name: small, deviceClassName: gpu.example.com, count: 2}
        """
      Then the request is accepted
      And the stored ResourceClaimTemplate "resourceclaimtemplate" has field "spec.spec.devices.requests[0].firstAvailable[1].count"
      And the stored ResourceClaimTemplate "resourceclaimtemplate" has no field "spec.spec.devices.requests[0].exactly"

    Scenario: A v1beta1 slice's basic devices become plain devices
      When the user creates the ResourceSlice:
        """yaml
        apiVersion: resource.k8s.io/v1beta1
        spec:
          driver: gpu.example.com
          pool: {name: node-1, generation: 1, resourceSliceCount: 1}
          nodeName: node-1
          devices:
          - name: gpu-0
            basic:
              attributes:
                model: {string: a100}
              capacity:
                memory: {value: 40Gi}
        """
      Then the request is accepted
      And the stored ResourceSlice "resourceslice" has field "spec.devices[0].capacity[memory]"
      And the stored ResourceSlice "resourceslice" has no field "spec.devices[0].basic"

    Scenario: A v1beta2 claim has the v1 shape
      When the user creates the ResourceClaim:
        """yaml
        apiVersion: resource.k8s.io/v1beta2
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: gpu.example.com}
        """
      Then the request is accepted
      And the stored ResourceClaim "resourceclaim" has field "spec.devices.requests[0].exactly.deviceClassName"

    Scenario Outline: A v1 field written in v1beta1 is an unknown field (<what>)
      When the user creates the <kind>:
        """yaml
        <object>
        """
      Then the request is rejected at "<field>" by rule "DRA-API/SERVED-VERSIONS"

      Examples:
        | what                 | kind          | object                                                                                                                                                         | field                                  |
        | exactly in a request | ResourceClaim | {apiVersion: resource.k8s.io/v1beta1, spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}                                 | spec.devices.requests[0].exactly       |
        | a device's capacity  | ResourceSlice | {apiVersion: resource.k8s.io/v1beta1, spec: {driver: gpu.example.com, pool: {name: p, generation: 1, resourceSliceCount: 1}, allNodes: true, devices: [{name: gpu-0, capacity: {memory: {value: 1Gi}}}]}} | spec.devices[0].capacity |
