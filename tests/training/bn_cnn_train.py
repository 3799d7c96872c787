"""Issue 27's BatchNorm CNN: BatchNorm2d in training mode, Adam, StepLR and clip_grad_norm_, 20 steps on fixed
batches, then the running statistics and an eval-mode loss. Run by boot.py (track: both sides get the same data and
initial weights); prints ``loss NAME STEP VALUE`` lines (test_train23_causes.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16, eps=1e-3, momentum=0.2)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


X = torch.randn(64, 3, 8, 8)
Y = torch.randn(64, 5).argmax(1)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
criterion = nn.CrossEntropyLoss()
model.train()
for step in range(20):
    i = (step * 16) % 64
    x, y = X[i:i + 16], Y[i:i + 16]
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    print("loss", "train", step, loss.item())
model.eval()
with torch.no_grad():
    print("loss", "eval", 0, criterion(model(X), Y).item())
for k, v in enumerate(model.bn1.running_mean.tolist() + model.bn2.running_mean.tolist()):
    print("loss", "running_mean", k, v)
for k, v in enumerate(model.bn1.running_var.tolist() + model.bn2.running_var.tolist()):
    print("loss", "running_var", k, v)
