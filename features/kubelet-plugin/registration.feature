@kubelet-plugin
Feature: A DRA driver's kubelet plugin registers with the kubelet (plugin registration v1)

  The driver under test is "gpu.example.com" on node "node-1". The harness plays the kubelet's plugin
  watcher: it calls the Registration service on the registration socket the system under test names (by
  upstream convention /var/lib/kubelet/plugins_registry/<driver>-reg.sock), as the watcher does when the
  socket appears, and then reaches the plugin where the registration says.

  On a cluster running a driver of its own (cluster config driverUnderTest) these names stand for that driver,
  a node where it publishes devices and a class selecting them, and the GPUs for devices it publishes there.

  Background:
    Given driver "gpu.example.com" under test publishes devices "gpu-0", "gpu-1" of class "gpu" on node "node-1"

  Rule: DRA-PLUGIN/REGISTRATION-INFO  The plugin registers as the DRA plugin of its driver, at the path of its DRAPlugin socket

    Scenario: GetInfo names the type, the driver and the DRAPlugin socket
      When the kubelet on node "node-1" asks driver "gpu.example.com" for its plugin registration
      Then the plugin registers with type "DRAPlugin" and name "gpu.example.com"
      And the plugin registers the path of its DRAPlugin socket as its endpoint

  Rule: DRA-PLUGIN/REGISTRATION-VERSIONS  The registration names the DRAPlugin versions the plugin serves, newest first

    Scenario: The plugin answers in every DRAPlugin version it advertises
      Given a pod "trainer" with a claim for one "gpu" device
      When the scheduler runs
      And the kubelet on node "node-1" asks driver "gpu.example.com" for its plugin registration
      Then the registration prefers "v1.DRAPlugin" to "v1beta1.DRAPlugin"
      When the kubelet on node "node-1" asks driver "gpu.example.com" to prepare the claim of pod "trainer" over every DRAPlugin version it advertises
      Then the driver prepared the claim of pod "trainer" with the same devices each time it was asked

  Rule: DRA-PLUGIN/REGISTRATION-STATUS  The plugin takes the kubelet's verdict on its registration, and may answer a refusal with an error

    Scenario: The kubelet tells the plugin it is registered
      When the kubelet on node "node-1" tells driver "gpu.example.com" that its registration succeeded
      Then the plugin accepted every registration status it was told

    Scenario: The kubelet tells the plugin it refused the registration, and asks again later
      When the kubelet on node "node-1" tells driver "gpu.example.com" that its registration failed with "another plugin already registered endpoint /var/lib/kubelet/plugins/gpu.example.com/dra.sock"
      Then the plugin accepted every registration status it was told
      When the kubelet on node "node-1" asks driver "gpu.example.com" for its plugin registration
      Then the plugin registers with type "DRAPlugin" and name "gpu.example.com"
