# -*- coding: utf-8 -*-

# Copyright 2023 Google LLC
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#

import pandas as pd
from sklearn.linear_model import LinearRegression

# Create Dataset
data = {"A": [1.1, 2.2, 4.1, 5.2], "B": [200, 212.12, 22, 123], "Y": [1, 0, 1, 0]}
df = pd.DataFrame(data)
X = df[["A", "B"]]
Y = df["Y"]

# Train model
model = LinearRegression().fit(X, Y)
model.score(X, Y)
